"""Headings and snippets as a reader sees them: the source's markup taken out.

A hit's heading and snippet come from the file as written, so a Markdown page showed
`HTTP Basic Auth { #http-basic-auth }` and `[HTTP Basic Auth](https://developer...)`,
a reST page `:meth:`~flask.Flask.route``. `plain_text` keeps what the rendered page
shows and drops the rest: mkdocs/Pandoc attribute lists (`{ #id .class }`), Markdown
link targets, images (their alt text stays), emphasis marks, code ticks, heading marks,
quotes, HTML tags and comments, mdBook's `{{#include ...}}` directives; reST roles (their
label stays), link targets, literal ticks, underlines, directives and comments; HTML
entities where Markdown or HTML renders them. Only Markdown-like, reST and HTML sources
are touched: source code and plain text are shown as written (`*args` stays `*args`),
and so is a Markdown code block or code span (`__init__.py` in a fence,
`` `Rc<Mutex<i32>>` `` in a span). A passage may begin or end inside a fence, a comment
or a tag: what is left of it there is read as what it is. The terminal table, the JSON
and the search page all show the text made here (`search.engine`), so highlights are
found in it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from indexer.reading.formats import text_kind

MARKDOWN_KINDS = ("markdown", "office")  # Office files are read into Markdown-like text
_CLEANED_KINDS = (*MARKDOWN_KINDS, "rst", "html")

# Text already made plain (code, a role's label, an escaped character) is held aside
# between these private-use characters while the other rules run, so that no later rule
# reads `__init__` in a code span as emphasis.
_HOLD, _END = "\ue000", "\ue001"
_HELD = re.compile(f"{_HOLD}(\\d+){_END}")

# Whole lines (the text still has its line breaks here)
_FENCE = re.compile(r"^[ \t]*(?:```|~~~|///).*$", re.MULTILINE)  # code fences, /// blocks
# Markdown: a code fence line (its run of backticks or tildes, and its info string), and
# the `/// tip` lines of mkdocs blocks, which hold prose
_CODE_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^`\n]*?)[ \t]*$")
_BLOCK_FENCE = re.compile(r"^[ \t]*///.*$", re.MULTILINE)
# mdBook's preprocessor directives: {{#include file.rs:anchor}}, {{#playground x.rs}}
# and what is left of one cut at the passage's start (a path and `}}`) or end (`{{#include `)
_MDBOOK_DIRECTIVE = re.compile(r"\{\{#[^{}\n]*\}\}|\A[^{}\s]*\}\}|\{\{#[^{}\n]*\Z")
_ATX = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
# table rules: reST grid tables (`+=====+====+`) and Markdown's `|---|:--:|`
_TABLE_RULE = re.compile(
    r"""^[ \t]*(?:
        \+[=\-+]*[=\-][=\-+]*\+                      # +-----+=====+
        | \|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?  # |---|:--:|
    )[ \t]*$""",
    re.MULTILINE | re.VERBOSE,
)
# Sphinx's permalinks, read as text from HTML: `Command line options ¶`
_PILCROW = re.compile(r"[ \t]*\u00b6(?=\s|$)")
# reST: `text::` opens a literal block and shows `text:`; `::` alone shows nothing
_LITERAL_MARKER = re.compile(r"(\S)?[ \t]*::[ \t]*$", re.MULTILINE)
# Sphinx's smartquotes: ` --- ` is an em dash, ` -- ` an en dash
_DASHES = {" --- ": " \u2014 ", " -- ": " \u2013 "}
_UNDERLINE = re.compile(r"^[ \t]*([=\-~^\"'`#*+_:.])\1{2,}[ \t]*$", re.MULTILINE)
_QUOTE = re.compile(r"^[ \t]*>[ \t]?", re.MULTILINE)
_LINK_DEFINITION = re.compile(r"^[ \t]*\[[^\]\n]+\]:[ \t]+\S.*$", re.MULTILINE)
_ADMONITION = re.compile(r"^[ \t]*[!?]{3}\+?[ \t]+([\w-]+)(?:[ \t]+\"([^\"\n]*)\")?", re.MULTILINE)
_RST_TARGET = re.compile(r"^[ \t]*\.\.[ \t]+_[^:\n]*:.*$", re.MULTILINE)
# `.. XXX sort this out`: a comment (not a directive, target, substitution or footnote)
_RST_COMMENT = re.compile(r"^[ \t]*\.\.(?:[ \t]+(?![\w:-]+::|_|\||\[).*)?$", re.MULTILINE)
_RST_DIRECTIVE = re.compile(r"^[ \t]*\.\.[ \t]+([\w:-]+)::[ \t]*(.*)$", re.MULTILINE)
_RST_CODE_DIRECTIVES = {"code", "code-block", "sourcecode", "highlight", "literalinclude"}
_RST_ADMONITIONS = {
    "note", "warning", "tip", "hint", "important", "caution", "danger", "attention", "error",
    "admonition",
}  # fmt: skip
_RST_VERSIONS = {  # as Sphinx words them
    "versionadded": "Added in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "seealso": "See also:",
}

# Inline
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")
_RST_ROLE = re.compile(r"(?::[\w.+-]+)+:`([^`]+)`")
_RST_LINK = re.compile(r"`([^`<]*?)\s*<[^`>]+>`__?")
_RST_REFERENCE = re.compile(r"(?<!`)`([^`]+)`__?")
# a code span may wrap within its paragraph, never across a blank line, and holds
# backtick runs of other lengths than its own (``the trait `Send` ``)
_BLANK_LINE = r"\n[ \t]*\n"  # inline markup never reaches across one
_CODE = re.compile(rf"(`+)(?!`)((?:(?!{_BLANK_LINE})[\s\S])+?)(?<!`)\1(?!`)")
# what is left of a code span cut at the passage's start (`uild` function`: its closing
# backtick, after text, with no opening one before it) or at its end (an opening one)
_CODE_END = re.compile(rf"\A((?:(?!{_BLANK_LINE})[^`])*?\S)`(?=[\s.,;:!?)'\"]|\Z)")
_CODE_START = re.compile(rf"(?:(?<=[\s(\[{{'\"])|\A)`(?=\S)((?:(?!{_BLANK_LINE})[^`])*)\Z")
_INCLUDE = re.compile(r"\{\*.*?\*\}")  # FastAPI's mkdocs snippet includes: {* ../x.py hl[3] *}
_ATTRIBUTE = r"(?:[#.][\w:-]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s}]+)|-)"
_ATTRIBUTES = re.compile(rf"[ \t]*\{{:?[ \t]*{_ATTRIBUTE}(?:[ \t]+{_ATTRIBUTE})*[ \t]*\}}")
_SPAN = re.compile(rf"\[([^\]\n]*)\]\{{[ \t]*{_ATTRIBUTE}(?:[ \t]+{_ATTRIBUTE})*[ \t]*\}}")
_LABEL = rf"((?:(?!{_BLANK_LINE})[^\]])+)"  # a link's text: it may wrap within its paragraph
_TARGET = r"\((?:[^()\s]|\([^()\s]*\))*(?:[ \t]+\"[^\"\n]*\")?\)"  # (url "title")
_IMAGE = re.compile(rf"!\[((?:(?!{_BLANK_LINE})[^\]])*)\]{_TARGET}")
_LINK = re.compile(rf"\[{_LABEL}\]{_TARGET}")
_REFERENCE_LINK = re.compile(rf"\[{_LABEL}\]\[[^\]\n]*\]")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^<>\s]+)>")
# an attribute's quoted value may hold `>` (`<dfn title="a -> b">`)
_TAG = re.compile(r"""</?[A-Za-z][\w-]*(?:\s(?:[^<>"']|"[^"]*"|'[^']*')*)?/?>""")
# the end of a tag cut at the passage's start (`str, int">type`), the start of one at its end
_TAG_END = re.compile(r"""\A[^<>\n]*["']\s*/?>""")
_TAG_START = re.compile(r"""<[A-Za-z][\w-]*\s[^<>]*=[^<>]*\Z""")
_COMMENT = re.compile(r"<!--[\s\S]*?-->")
# what is left of a comment cut at the passage's start or end
_COMMENT_END = re.compile(r"\A(?:(?!<!--)[\s\S])*?-->")
_COMMENT_START = re.compile(r"<!--[\s\S]*\Z")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_STRONG_STARS = re.compile(r"(\*\*)(?=\S)(.+?)(?<=\S)\1")
_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_UNDERSCORE = re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])")


def _cut_code_spans(text: str, hold: Callable[[str], str]) -> str:
    """`text` with what is left of a code span cut at its start or end held as code: a
    lone backtick there would pair with the next span's and turn the text between them
    into code (`uild` function so that `args` has`)."""
    if cut := _CODE_END.match(text):
        text = hold(cut.group(1)) + text[cut.end() :]
    last_paragraph = re.split(_BLANK_LINE, text)[-1]
    if last_paragraph.count("`") % 2 and (cut := _CODE_START.search(text)):
        text = text[: cut.start()] + hold(cut.group(1))
    return text


def plain_text(text: str, kind: str) -> str:
    """`text` (a passage, or a heading) from a source of `kind` (`text_kind`), with its
    markup taken out; unchanged for source code, plain text and PDFs."""
    if kind not in _CLEANED_KINDS:
        return text
    if kind == "html":  # read through a parser already: entities written twice, permalinks
        return _PILCROW.sub("", html.unescape(text))
    held: list[str] = []
    hold = _holder(held)
    markdown = kind in MARKDOWN_KINDS
    if markdown:
        text = _fenced_code_held(_MDBOOK_DIRECTIVE.sub("", text), hold)
    text = _lines(text, markdown)
    text = _ESCAPE.sub(lambda m: hold(m.group(1)), text)
    if not markdown:
        text = _RST_ROLE.sub(lambda m: hold(_role_label(m.group(1))), text)
        text = _RST_LINK.sub(lambda m: hold(m.group(1)), text)
        text = _RST_REFERENCE.sub(lambda m: hold(m.group(1)), text)
    text = _cut_code_spans(text, hold)
    text = _CODE.sub(lambda m: hold(m.group(2).strip()), text)
    if markdown:
        text = _COMMENT_START.sub("", _COMMENT_END.sub("", _COMMENT.sub("", text)))
    text = _INCLUDE.sub("", text)
    text = _SPAN.sub(r"\1", text)
    text = _ATTRIBUTES.sub("", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _REFERENCE_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(lambda m: hold(m.group(1)), text)
    if markdown:
        text = _TAG_START.sub("", _TAG_END.sub("", _TAG.sub("", text)))
    text = (_STRONG if markdown else _STRONG_STARS).sub(r"\2", text)
    text = _STAR.sub(r"\1", text)
    if markdown:  # reST has no underscore emphasis (`name_` is a link there)
        text = _UNDERSCORE.sub(r"\1", text)
    if not markdown:
        for written, dash in _DASHES.items():
            text = text.replace(written, dash)
    # Markdown renders `&amp;` as & (not in code); reST shows it as written
    text = html.unescape(text) if markdown else text
    return _HELD.sub(lambda m: held[int(m.group(1))], text)


def plain_heading(heading: str | None, path: str) -> str | None:
    """A hit's heading or section trail without the markup of the file at `path`."""
    if heading is None:
        return None
    return plain_text(heading, text_kind(path)).strip() or heading


def _holder(held: list[str]) -> Callable[[str], str]:
    def hold(plain: str) -> str:
        held.append(plain)
        return f"{_HOLD}{len(held) - 1}{_END}"

    return hold


def _fenced_code_held(text: str, hold: Callable[[str], str]) -> str:
    """Markdown `text` with each fenced code block's lines held as written and its fence
    lines emptied. An odd number of fences means the text begins or ends inside a block:
    inside at the start when its first fence is bare (a closing fence), else at the end."""
    lines = text.splitlines(keepends=True)
    fences = [(i, _CODE_FENCE.match(line.rstrip("\r\n"))) for i, line in enumerate(lines)]
    fences = [(i, found) for i, found in fences if found]
    if not fences:
        return text
    opened: str | None = None  # the fence run of the open block, if inside one
    if len(fences) % 2 and not fences[0][1].group(2):
        opened = fences[0][1].group(1)
    shown: list[str] = []
    code: list[str] = []
    fence_at = dict(fences)
    for index, line in enumerate(lines):
        fence = fence_at.get(index)
        closes = (
            fence is not None
            and opened is not None
            and fence.group(1)[0] == opened[0]
            and len(fence.group(1)) >= len(opened)
            and not fence.group(2)
        )
        if opened is None and fence is None:
            shown.append(line)
        elif opened is None or closes:
            if code:
                shown.append(hold("".join(code)))
                code = []
            shown.append(line[len(line.rstrip("\r\n")) :])  # the fence line, emptied
            opened = None if closes else fence.group(1)  # type: ignore[union-attr]
        else:
            code.append(line)
    if code:
        shown.append(hold("".join(code)))
    return "".join(shown)


def _lines(text: str, markdown: bool) -> str:
    """The markup that fills whole lines: fences, heading marks and underlines, quotes,
    link definitions, admonitions and directives."""
    text = (_BLOCK_FENCE if markdown else _FENCE).sub("", text)
    text = _TABLE_RULE.sub("", text)
    text = _UNDERLINE.sub("", text)
    if markdown:
        text = _ATX.sub(r"\1", text)
        text = _QUOTE.sub("", text)
        text = _LINK_DEFINITION.sub("", text)
        return _ADMONITION.sub(lambda m: (m.group(2) or m.group(1).capitalize()) + ":", text)
    text = _RST_TARGET.sub("", text)
    text = _RST_DIRECTIVE.sub(_directive, text)
    text = _RST_COMMENT.sub("", text)
    return _LITERAL_MARKER.sub(lambda m: f"{m.group(1)}:" if m.group(1) else "", text)


def _directive(match: re.Match[str]) -> str:
    """`.. note::` reads `Note:`; a code block's language is dropped; any other
    directive keeps its argument (`.. autofunction:: flask.url_for`)."""
    name, argument = match.group(1).lower(), match.group(2).strip()
    if name in _RST_CODE_DIRECTIVES:
        return ""
    if name in _RST_VERSIONS:
        return f"{_RST_VERSIONS[name]} {argument}".rstrip()
    if name in _RST_ADMONITIONS:
        return f"{name.capitalize()}: {argument}".rstrip()
    return argument


def _role_label(content: str) -> str:
    """What Sphinx shows for a role: `text <target>` shows text, `~a.b.c` shows c,
    `!x` shows x."""
    labelled = re.fullmatch(r"(.*?)\s*<[^<>]+>", content, re.DOTALL)
    if labelled and labelled.group(1):
        return labelled.group(1)
    content = content.lstrip("!")
    if content.startswith("~"):
        return content[1:].rsplit(".", 1)[-1]
    return content
