"""Every file format ctxsearch reads, described once: its extensions, its reader, the kind
of text it gives, its name for `--type` and the language whose definitions outline it.

The walk (`indexer.reading.sources`), the readers' dispatch, the filters (`--type md`),
the help of `index`, the error for a folder with nothing to read and `docs/formats.md`
all read `FORMATS`; a new format is one entry here (and its reader).
`python -m indexer.reading.formats > docs/formats.md` writes the page (a test fails when
it is stale).

The kind of text a format gives (`TEXT_KINDS`) decides what its lines, headings and
markup are (`indexer.reading.text_layout`, `indexer.splitting.structure`, `search.markup`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from indexer.reading.office import read_docx, read_epub, read_odt, read_pptx
from indexer.reading.readers import read_html_layout, read_pdf_layout, read_plain_text
from indexer.reading.text_layout import Layout

TextReader = Callable[[bytes], str]
LayoutReader = Callable[[bytes], tuple[str, Layout]]
# Each kind of text, and what its lines, headings and markup are.
TEXT_KINDS = {
    "markdown": "lines counted in the file; headings from `#` lines and underlined titles; "
    "Markdown markup left out of headings and snippets",
    "rst": "lines counted in the file; headings from underlined titles; reST markup left out",
    "html": "the visible text, inline elements (`<code>`, `<a>`, `<em>` ...) in their line "
    "and each block element on lines of its own; source lines and `<h1>`-`<h6>` headings "
    "recorded by the reader; entities and permalink marks left out",
    "pdf": "the text layer, page by page; pages recorded by the reader (a section per page)",
    "office": "read into Markdown-like text: `#` headings (titles, slides, chapters); no "
    "source lines",
    "text": "lines counted in the file; shown as written; code in a language with an "
    "outline has its definitions as headings",
}


@dataclass(frozen=True)
class FileFormat:
    """One format: what a person calls it, the extensions that name it (lower case, with
    the dot; the longest one a file name ends in wins, so `x.rst.txt` is reST), and how
    its bytes become text: `reader` gives the text, `layout_reader` the text and where its
    parts came from (for formats whose text is not the file's). `type_name` is its name
    for the `--type` filter (None: only its extensions filter it); `language` is the
    language `indexer.splitting.code_outline` finds the definitions of (None: none)."""

    name: str
    extensions: tuple[str, ...]
    text_kind: str
    type_name: str | None = None
    reader: TextReader | None = None
    layout_reader: LayoutReader | None = None
    language: str | None = None

    def read(self, data: bytes) -> tuple[str, Layout | None]:
        """The text of a file of this format, and its layout where the reader records
        one (None: the text is the file's, see `indexer.reading.text_layout.text_layout`)."""
        if self.layout_reader is not None:
            return self.layout_reader(data)
        assert self.reader is not None
        return self.reader(data), None

    @property
    def reader_name(self) -> str:
        """The reader's qualified name: two files whose bytes are the same but whose
        readers differ give different text."""
        reader = self.layout_reader or self.reader
        return f"{reader.__module__}.{reader.__qualname__}"


def _text(
    name: str, *extensions: str, kind: str = "text", type_name: str | None = None
) -> FileFormat:
    """A format read as it is (decoded): its text is the file."""
    return FileFormat(name, extensions, kind, type_name, reader=read_plain_text)


def _code(name: str, *extensions: str, language: str | None = None) -> FileFormat:
    """Source code or configuration, read as it is: the `code` type."""
    return FileFormat(name, extensions, "text", "code", read_plain_text, language=language)


# fmt: off
_OTHER_CODE = (
    ".java", ".kt", ".kts", ".scala", ".groovy", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh",
    ".cs", ".rb", ".php", ".swift", ".m", ".mm", ".r", ".jl", ".lua", ".pl", ".pm", ".sh",
    ".bash", ".zsh", ".fish", ".ps1", ".sql", ".css", ".scss", ".sass", ".less", ".vue",
    ".svelte", ".dart", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".elm", ".toml", ".yaml",
    ".yml", ".ini", ".cfg", ".conf", ".json", ".xml", ".tex", ".bib", ".proto", ".graphql", ".mk",
)
# fmt: on

# In this order the `--type` names are listed (`FILE_TYPES`).
FORMATS: tuple[FileFormat, ...] = (
    _text("Markdown", ".md", ".markdown", ".mdx", kind="markdown", type_name="md"),
    # with Sphinx's NAME.rst.txt copies of its sources, read as reST
    _text("reStructuredText", ".rst", ".rst.txt", kind="rst", type_name="rst"),
    _text("plain text", ".txt", ".text", type_name="txt"),
    _text("Org", ".org"),
    _text("AsciiDoc", ".adoc", ".asciidoc"),
    _text("CSV", ".csv"),
    _text("TSV", ".tsv"),
    _text("log", ".log"),
    FileFormat("HTML", (".html", ".htm", ".xhtml"), "html", "html", layout_reader=read_html_layout),
    FileFormat("PDF", (".pdf",), "pdf", "pdf", layout_reader=read_pdf_layout),
    FileFormat("Word", (".docx",), "office", "office", reader=read_docx),
    FileFormat("PowerPoint", (".pptx",), "office", "office", reader=read_pptx),
    FileFormat("OpenDocument text", (".odt",), "office", "office", reader=read_odt),
    FileFormat("EPUB", (".epub",), "office", "epub", reader=read_epub),
    _code("Python", ".py", ".pyi", language="python"),
    _code(
        "JavaScript and TypeScript",
        *(".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx"),
        language="javascript",
    ),
    _code("Go", ".go", language="go"),
    _code("Rust", ".rs", language="rust"),
    _code("other source code and configuration", *_OTHER_CODE),
)

_BY_EXTENSION = {extension: found for found in FORMATS for extension in found.extensions}


def _file_types() -> dict[str, tuple[str, ...]]:
    types: dict[str, tuple[str, ...]] = {}
    for found in FORMATS:
        if found.type_name is not None:
            types[found.type_name] = types.get(found.type_name, ()) + found.extensions
    return types


# Each `--type` name and the extensions it covers.
FILE_TYPES = _file_types()


def file_format(path: str | Path) -> FileFormat | None:
    """The format of the file at `path` (a path, a name, or a stored path such as
    `record:ID`), by the longest registered extension its name ends in; None if none."""
    name = str(path).lower()
    dot = name.find(".", max(name.rfind("/"), 0))
    while dot >= 0:
        found = _BY_EXTENSION.get(name[dot:])
        if found is not None:
            return found
        dot = name.find(".", dot + 1)
    return None


def text_kind(path: str | Path) -> str:
    """The kind of text (see the module's docstring) of the file at `path`: its
    format's, or `text` for a name no format has (a record's `record:ID`)."""
    found = file_format(path)
    return found.text_kind if found is not None else "text"


def longer_suffixes(suffix: str, chosen: set[str]) -> tuple[str, ...]:
    """The named types' extensions that end in `suffix` without being it or `chosen`: a
    file `x.rst.txt` is reStructuredText, so `txt` must leave it out unless `rst` is asked."""
    known = {other for suffixes in FILE_TYPES.values() for other in suffixes}
    return tuple(
        sorted(
            other
            for other in known
            if other != suffix and other.endswith(suffix) and other not in chosen
        )
    )


def readable_summary() -> str:
    """The formats read, in a few words for help texts and errors: each format's first
    extension, and source code for the formats of the `code` type."""
    shown = [found.extensions[0] for found in FORMATS if found.type_name != "code"]
    return " ".join(shown) + " and source code"


def reference() -> str:
    """The page `docs/formats.md`: every format, its extensions and what is made of it."""
    lines = [
        "# File formats",
        "",
        "Every file format `ctxsearch index` reads. This page is generated from",
        "`indexer/reading/formats.py`: `python -m indexer.reading.formats > docs/formats.md`",
        "(a test fails when it is stale). A file is read by the format of the longest",
        "extension its name ends in (`guide.rst.txt` is reStructuredText); files of other",
        "extensions are not indexed. `--type NAME` filters a search by the type's extensions",
        "(any extension, `--type .py`, works too). The last table says what each kind of",
        "text gives.",
        "",
        "| format | extensions | `--type` | text |",
        "|---|---|---|---|",
    ]
    for found in FORMATS:
        extensions = " ".join(f"`{extension}`" for extension in found.extensions)
        type_name = f"`{found.type_name}`" if found.type_name else ""
        kind = found.text_kind
        if found.language is not None:
            kind += f" ({found.language} definitions as headings)"
        lines.append(f"| {found.name} | {extensions} | {type_name} | {kind} |")
    lines += ["", "| text | what it is |", "|---|---|"]
    lines += [f"| {kind} | {meaning} |" for kind, meaning in TEXT_KINDS.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(reference(), end="")
