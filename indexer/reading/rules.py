"""Which files of a root are indexed: --exclude and --include patterns, remembered per
root, on top of `.ctxsearchignore` and of default excludes for web assets; and whether
links to files outside the root are followed (`follow_links_outside`, remembered too;
off by default, see `indexer.reading.links`).

Patterns use gitignore syntax, relative to the root. A file is skipped when
- an --exclude pattern or `.ctxsearchignore` matches it; else
- --include patterns are given and none matches it; else
- a default exclude matches it and no --include pattern does.

The default excludes (`DEFAULT_EXCLUDES`) are the assets that documentation trees carry
beside their pages and that swamped results: style sheets, source maps, minified files,
JavaScript in asset folders (`_static/`, `static/`, `assets/`, `js/`) and Sphinx's
`_sources/` copies of every page (the same text again as `.rst.txt`). JavaScript
elsewhere (a project's `src/`) is still read as code.

A pattern pathspec cannot compile (`[z-a]`, a lone `\\` or `!`) is refused where it enters:
`RootRules` raises `InvalidPattern` naming it, and `indexer.reading.sources` checks each line of
`.ctxsearchignore` with `pattern_error` before a walk starts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property

import pathspec
from pathspec.patterns.gitignore import GitIgnorePatternError

from indexer.errors import InvalidPattern

DEFAULT_EXCLUDES = (
    "*.css",
    "*.scss",
    "*.sass",
    "*.less",
    "*.map",
    "*.min.js",
    "*.min.mjs",
    "*.min.css",
    "**/_static/**/*.js",
    "**/static/**/*.js",
    "**/assets/**/*.js",
    "**/js/**/*.js",
    "**/_sources/",
)


# What the row of a root that is one file remembers in place of rules (none of a folder's
# apply to it; see `indexer.runs.file_roots`): it marks the root as a file's.
FILE_ROOT = '{"file": true}'


@dataclass(frozen=True)
class RootRules:
    """The patterns of one root's runs (see the module docstring)."""

    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    default_excludes: bool = True
    follow_links_outside: bool = False
    # The lines of .ctxsearchignore, checked where the file is read (`indexer.reading.sources`).
    ignore_file: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        for kind, patterns in (("exclude", self.exclude), ("include", self.include)):
            for pattern in patterns:
                if why := pattern_error(pattern):
                    raise InvalidPattern(f"{kind} pattern {why}")

    def to_json(self) -> str:
        """What the root's row remembers (not the ignore file: it is read at each run)."""
        return json.dumps(
            {
                "exclude": list(self.exclude),
                "include": list(self.include),
                "default_excludes": self.default_excludes,
                "follow_links_outside": self.follow_links_outside,
            }
        )

    def to_dict(self) -> dict[str, object]:
        """The rules as JSON-ready values (for the run summary)."""
        return json.loads(self.to_json())

    @classmethod
    def from_json(cls, value: str | None) -> RootRules:
        """Rules remembered in a root's row (none remembered: the defaults)."""
        if not value:
            return cls()
        data = json.loads(value)
        return cls(
            tuple(data.get("exclude", ())),
            tuple(data.get("include", ())),
            bool(data.get("default_excludes", True)),
            bool(data.get("follow_links_outside", False)),
        )

    @cached_property
    def _excluded(self) -> pathspec.GitIgnoreSpec:
        return pathspec.GitIgnoreSpec.from_lines([*self.ignore_file, *self.exclude])

    @cached_property
    def _included(self) -> pathspec.GitIgnoreSpec:
        return pathspec.GitIgnoreSpec.from_lines(self.include)

    @cached_property
    def _defaults(self) -> pathspec.GitIgnoreSpec:
        return pathspec.GitIgnoreSpec.from_lines(DEFAULT_EXCLUDES if self.default_excludes else ())

    def skips_folder(self, relative: str) -> bool:
        """Whether the walk may skip a whole folder (`relative` ends with `/`)."""
        if self._excluded.match_file(relative):
            return True
        return not self.include and self._defaults.match_file(relative)

    def skips_file(self, relative: str) -> bool:
        """Whether a file (path relative to the root) is left out."""
        if self._excluded.match_file(relative):
            return True
        included = self._included.match_file(relative)
        if self.include and not included:
            return True
        return not included and self._defaults.match_file(relative)


def pattern_error(pattern: str) -> str | None:
    """Why `pattern` is not a gitignore pattern pathspec can use, naming it (None: it is)."""
    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except GitIgnorePatternError as error:
        detail = str(error.__cause__ or error)
    except re.error as error:  # a reversed range: pathspec hands on the regex's own error
        detail = error.msg
    else:
        return None
    detail = detail.removesuffix(f": {pattern!r}").rstrip(".")
    return f"{pattern!r} is not a valid gitignore pattern ({detail[:1].lower()}{detail[1:]})"


def merged(
    remembered: RootRules,
    exclude: tuple[str, ...] | list[str] | None,
    include: tuple[str, ...] | list[str] | None,
    default_excludes: bool | None,
    forget: bool = False,
    follow_links_outside: bool | None = None,
) -> RootRules:
    """This run's rules: what was given replaces what was remembered, kind by kind."""
    base = RootRules() if forget else remembered
    return RootRules(
        tuple(exclude) if exclude is not None else base.exclude,
        tuple(include) if include is not None else base.include,
        default_excludes if default_excludes is not None else base.default_excludes,
        follow_links_outside if follow_links_outside is not None else base.follow_links_outside,
    )
