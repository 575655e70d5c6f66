"""Fixtures shared by the store tests."""

from __future__ import annotations

import pytest

from indexer import Indexer
from indexer.store.backends import open_store


@pytest.fixture
def notes_store(postgres_index, notes, fast_model):
    """A PostgreSQL index of the notes folder, opened (and closed after the test)."""
    Indexer(postgres_index, model=fast_model).index_folder(notes)
    opened = open_store(postgres_index)
    yield opened
    opened.close()
