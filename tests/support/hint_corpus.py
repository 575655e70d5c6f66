"""A small index of notes (md, txt) and two records, for the tests of filter hints."""

from __future__ import annotations

from pathlib import Path

RECORDS = [
    {"id": "r1", "text": "Otters hold hands while they sleep.", "metadata": {"lang": "en"}},
    {"id": "r2", "text": "Kettles boil water.", "metadata": {"lang": "en", "public": True}},
]


def make_hint_index(base: Path, model: Path) -> tuple[Path, Path]:
    """The index (built with `model`, the tiny BERT) and its notes folder, under `base`."""
    from indexer import Indexer

    folder = base / "notes"
    folder.mkdir()
    (folder / "otters.md").write_text("# Otters\n\nOtters float on their backs.\n")
    (folder / "kettles.txt").write_text("A kettle whistles when the water boils.\n")
    index = base / "index"
    indexer = Indexer(index, model=str(model))
    indexer.index_folder(folder)
    indexer.upsert_records(RECORDS)
    return index, folder
