"""The memos of token spans kept between processes: read back as written, and kept
within their budget on disk, least recently used out first."""

import os

import numpy as np

from indexer.splitting import token_memo
from indexer.splitting.token_memo import TokenMemo, digest


def written(folder, document: str) -> TokenMemo:
    """A memo of one section text and one count, for `document`."""
    memo = TokenMemo.of(folder, "tok", document)
    memo.write({digest(document): np.array([[0, 3], [4, 9]])}, {digest("count me"): 2})
    return memo


def test_a_memo_reads_back_what_was_written(tmp_path):
    sections, counts = written(tmp_path, "otters.md").read()
    assert [spans.tolist() for spans in sections.values()] == [[[0, 3], [4, 9]]]
    assert counts == {digest("count me"): 2}


def test_the_least_recently_used_memos_go_once_the_folder_is_over_its_budget(tmp_path, monkeypatch):
    """Memos of files long gone used to pile up in the cache for ever. A memo read is
    used (a later edit's split read it), so it outlives an older one left unread."""
    old, read, newer = (written(tmp_path, name) for name in ("old.md", "read.md", "newer.md"))
    for age, memo in enumerate((read, old, newer)):  # read.md written first of all
        os.utime(memo.path, ns=(10**18 + age, 10**18 + age))
    assert read.read()[0]  # used now
    size = old.path.stat().st_size
    monkeypatch.setattr(token_memo, "MEMO_BUDGET_BYTES", 3 * size, raising=False)
    latest = written(tmp_path, "latest.md")
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        memo.path.name for memo in (read, newer, latest)
    )
    assert latest.read()[0] and read.read()[0]
    assert old.read() == ({}, {})  # gone: the next split tokenises that file again


def test_memos_within_the_budget_are_all_kept(tmp_path):
    memos = [written(tmp_path, f"page-{number}.md") for number in range(5)]
    assert all(memo.path.exists() for memo in memos)
