"""FTS5's tokens in PostgreSQL: the text the lexical space is made of, split as the
embedded store's unicode61 tokenizer splits it, so both stores count the same terms.

unicode61 (`remove_diacritics 2`) makes a token of every run of letters and digits
(Unicode categories L*, N*), folds case and diacritics, and separates at everything else.
PostgreSQL's parser instead keeps hyphenated words whole beside their parts (`follow-up`,
`follow`, `up`), decimals, signed numbers, versions, hosts and paths as one token
(`0.05`, `-1`, `and/or`), and in a C-locale database lower-cases only ASCII. So the
text is first rewritten (`lexical_text`, an SQL function in the index's schema):
decomposed (NFD) and stripped of combining accents, lower-cased, every run of other
characters made one space; what the parser then reads is words and numbers alone, one
position each, and the configuration `ctxsearch_fts5` stems them all with the Porter
stemmer (Snowball's `porter`, FTS5's `porter` algorithm). Measured on SciFact's 10,917
passages: all but one hold the very tokens FTS5 holds (1,270,680 in all).

Left apart: Snowball's Porter stems a 2-letter word ending in `s` (`vs`, `ms`) where
FTS5 keeps every token shorter than 3 bytes, and lacks two rules of Porter's own C
version that FTS5 has (`-logi` to `-log`, `-bli` to `-ble`: `pathology`, `possibly`):
103 of SciFact's 36,016 word forms stem apart, which moves no ranking measured
(nDCG@10 0.6836 against 0.6835, docs/reports/2026-12-01-postgres-lexical.md).

On a server without the `pg_c_utf8` collation (PostgreSQL before 17) letters and case
are those of the database's collation, except that a C-locale database, whose classes
know only ASCII, takes every non-ASCII character for a letter (as PostgreSQL's parser
does there); without regexp_count (before 15) the length is counted from the tsvector;
a database not in UTF-8 skips the accent folding.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, text

CONFIG = "ctxsearch_fts5"
STEMMER = f"{CONFIG}_stem"
# unicode61's token characters beyond what [[:alnum:]] holds: the superscript and
# subscript digits and vulgar fractions (category No) that SciFact's units use (m², nh₂).
_TOKEN_EXTRA = r"\u00b2\u00b3\u00b9\u00bc-\u00be\u2070-\u2079\u2080-\u2089"
_ACCENTS = r"[\u0300-\u036f]"
_NON_ASCII = r"\u0080-\U0010ffff"


@dataclass(frozen=True)
class Server:
    """What the tokenizer's SQL can use on this server and database."""

    utf8: bool  # the database's encoding (normalize() and Unicode classes need it)
    unicode_collation: bool  # the builtin pg_c_utf8 collation (PostgreSQL 17+)
    ascii_classes: bool  # a C-locale database: [[:alnum:]] holds only ASCII
    regexp_count: bool  # PostgreSQL 15+

    @classmethod
    def of(cls, connection: Connection) -> Server:
        """This connection's server and database."""
        utf8, collation, ascii_classes, version = connection.execute(
            text(
                "SELECT current_setting('server_encoding') = 'UTF8', "
                "EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'pg_c_utf8'), "
                "(SELECT datctype IN ('C', 'POSIX') FROM pg_database "
                "WHERE datname = current_database()), "
                "current_setting('server_version_num')::int"
            )
        ).one()
        return cls(bool(utf8), bool(utf8 and collation), bool(ascii_classes), version >= 150000)

    @property
    def collate(self) -> str:
        return ' COLLATE "pg_c_utf8"' if self.unicode_collation else ""

    @property
    def token_extra(self) -> str:
        """Token characters to add to [[:alnum:]]'s."""
        if not self.utf8:
            return ""
        if not self.unicode_collation and self.ascii_classes:
            return _NON_ASCII
        return _TOKEN_EXTRA


def tokenizer_statements(server: Server) -> list[str]:
    """The statements that make the stemmer, `CONFIG` and `lexical_text(text)` in the
    current schema (anything of theirs left there by a dropped index replaced)."""
    collate = server.collate
    folded = f"lower(value{collate})"
    if server.utf8:
        # composed again after the accents go: a kana's voicing mark (`が`), a Hangul
        # syllable's jamo, are no accent, and apart they would split the word
        folded = (
            f"translate(lower(normalize(regexp_replace(normalize(value, NFD), '{_ACCENTS}', "
            f"'', 'g'), NFC){collate}), '\u00b5', '\u03bc')"  # the micro sign folds to mu
        )
    return [
        f"DROP TEXT SEARCH CONFIGURATION IF EXISTS {CONFIG}",
        f"DROP TEXT SEARCH DICTIONARY IF EXISTS {STEMMER}",
        f"CREATE TEXT SEARCH DICTIONARY {STEMMER} (TEMPLATE = snowball, Language = porter)",
        f"CREATE TEXT SEARCH CONFIGURATION {CONFIG} (PARSER = pg_catalog.default)",
        # after lexical_text the parser meets only these kinds of token
        f"ALTER TEXT SEARCH CONFIGURATION {CONFIG} ADD MAPPING FOR asciiword, word, numword, "
        f"int, uint, sfloat WITH {STEMMER}",
        "CREATE OR REPLACE FUNCTION lexical_text(value text) RETURNS text "
        "LANGUAGE sql IMMUTABLE PARALLEL SAFE "
        f"RETURN regexp_replace({folded}, '[^[:alnum:]{server.token_extra}]+', ' ', 'g')",
    ]


def length_expression(server: Server, source: str = "text") -> str:
    """SQL of a chunk's length in tokens from the text `source` (an SQL expression): the
    runs of token characters (accents inside a word are part of it), or the tsvector's
    positions."""
    if not server.regexp_count:
        return f"lexical_tokens({vector_expression(source)})"
    accents = _ACCENTS[1:-1] if server.utf8 else ""
    return f"regexp_count({source}{server.collate}, '[[:alnum:]{accents}{server.token_extra}]+')"


def vector_expression(value: str) -> str:
    """SQL of the tsvector of the text `value` (an SQL expression)."""
    return f"to_tsvector('{CONFIG}', lexical_text({value}))"


def phrase_expression(value: str) -> str:
    """SQL of the tsquery of one query term: its tokens as a phrase, as FTS5 reads a
    quoted term (`snake_case` matches `snake` followed by `case`)."""
    return f"phraseto_tsquery('{CONFIG}', lexical_text({value}))"


def use_fts5_tokens(connection: Connection, source: str = "text") -> None:
    """Make the tokenizer and generate the tsvector and length columns with it from the
    text `source` (an SQL expression on a chunk's columns), made again: an existing
    index's rows are re-read, its GIN index rebuilt."""
    server = Server.of(connection)
    # the columns first: the configuration they were made with cannot go before them
    connection.execute(text("ALTER TABLE chunks DROP COLUMN tsv, DROP COLUMN lexical_length"))
    for statement in tokenizer_statements(server):
        connection.execute(text(statement))
    connection.execute(
        text(
            f"ALTER TABLE chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS "
            f"({vector_expression(source)}) STORED, "
            "ADD COLUMN lexical_length integer GENERATED ALWAYS AS "
            f"({length_expression(server, source)}) STORED"
        )
    )
    connection.execute(text("CREATE INDEX ix_chunks_tsv ON chunks USING gin (tsv)"))
