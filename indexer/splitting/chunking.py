"""A document's chunks as the index stores them: its passages, located in the file.

`chunk_document` is the one way text is split for the index, for files and records
alike: passages anchored to the document's own structure (`indexer.splitting.passages`:
sections first, then windows of at most the model's `max_tokens` tokens inside each),
each given its lines and page (`indexer.reading.text_layout`, those of its text without
the whitespace around it), its `heading` (the title of the section that holds it) and
its `section` trail (the titles from the outermost in, joined by `SECTION_SEPARATOR`).

The chunks tile the text but for the whitespace before the first and after the last, so
the text can be stitched back from them (`search.documents.stitch`): every character
that is not whitespace lies inside at least one chunk, and each chunk's offsets give its
text back.

The chunker never loads a model: it takes a function that returns the character span
of every token of a text, which the encoder's tokenizer provides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from indexer.reading.formats import text_kind
from indexer.reading.line_map import encode_line_map
from indexer.reading.text_layout import Layout, Locator
from indexer.splitting.boundaries import TokenSpans
from indexer.splitting.passages import Passage, document_passages
from indexer.splitting.split_cache import SplitCache
from indexer.splitting.structure import section_kind
from indexer.splitting.token_memo import TokenMemo


@dataclass(frozen=True)
class Chunk:
    """A passage of a document: its position, character offsets and text, and where it
    sits in the file (see `indexer.reading.text_layout`; None where unknown or not
    applicable): lines, page, the title of the section holding it and that section's trail."""

    ordinal: int
    start: int
    end: int
    text: str
    line: int | None = None
    end_line: int | None = None
    heading: str | None = None
    page: int | None = None
    line_map: str | None = None  # JSON, for HTML and PDF (see `indexer.reading.line_map`)
    section: str | None = None
    # What the model encodes (`indexer.splitting.model_input`); None: the text alone.
    model_text: str | None = None

    @property
    def encoded_text(self) -> str:
        """The text the vector spaces encode for this chunk (its content key's text)."""
        return self.text if self.model_text is None else self.model_text


def chunk_document(
    text: str,
    path: str,
    layout: Layout | None,
    token_spans: TokenSpans,
    max_tokens: int,
    overlap: int,
    cache: SplitCache | None = None,
    memo: TokenMemo | None = None,
) -> list[Chunk]:
    """The chunks of `text`, read from `path` (its name says the format) with the
    reader's `layout`: at most `max_tokens` tokens each, `overlap` tokens repeated where a
    passage continues a section. A `cache` kept between calls spares the sections seen
    before their tokenising and cutting (`indexer.splitting.split_cache`), and with the
    document's `memo`, the tokenising of what a split in another process saw."""
    with (cache or SplitCache()).held() as held, held.keeping(memo, token_spans):
        passages = document_passages(
            text, section_kind(path), layout, token_spans, max_tokens, overlap, held
        )
        locator = Locator(text, text_kind(path), layout)
        chunks: list[Chunk] = []
        for passage, start, end in _extents(passages):
            where = locator.locate_text(passage.start, passage.text)
            chunk_text = text[start:end]
            chunks.append(
                Chunk(
                    ordinal=len(chunks),
                    start=start,
                    end=end,
                    text=chunk_text,
                    line=where.line,
                    end_line=where.end_line,
                    heading=passage.heading,
                    page=where.page,
                    section=passage.section,
                    line_map=encode_line_map(locator.line_map(start, end)),
                    model_text=held.model_input(
                        chunk_text, passage.section, token_spans, max_tokens
                    ),
                )
            )
    return chunks


def _extents(passages: list[Passage]) -> Iterator[tuple[Passage, int, int]]:
    """Each passage with text but whitespace, and the offsets of its chunk: the whitespace
    before the first chunk and after the last one is left out."""
    for number, passage in enumerate(passages):
        if not passage.text.strip():
            continue
        start = passage.start
        if number == 0:
            start += len(passage.text) - len(passage.text.lstrip())
        end = passage.end
        if number == len(passages) - 1:
            end = passage.start + len(passage.text.rstrip())
        yield passage, start, end


def chunk_text(text: str, token_spans: TokenSpans, max_tokens: int, overlap: int) -> list[Chunk]:
    """`chunk_document` for text of no particular format (one section, no headings)."""
    return chunk_document(text, "", None, token_spans, max_tokens, overlap)


def warm_split(
    text: str,
    path: str,
    layout: Layout | None,
    token_spans: TokenSpans,
    max_tokens: int,
    overlap: int,
    cache: SplitCache,
    give_way: Callable[[], bool],
    memo: TokenMemo | None = None,
) -> None:
    """Split `text` as `chunk_document` would, only to fill `cache` with its passages and
    what the model reads for each (nothing is located or returned). It gives way
    (`SplitCache.held`): `GaveWay` rises as soon as another split wants the cache or
    `give_way()` is true."""
    with cache.held(give_way) as held, held.keeping(memo, token_spans):
        passages = document_passages(
            text, section_kind(path), layout, token_spans, max_tokens, overlap, held
        )
        for passage, start, end in _extents(passages):
            held.model_input(text[start:end], passage.section, token_spans, max_tokens)
