"""The Python API other applications embed: Indexer, Searcher and typed errors."""

import ast
import re
from pathlib import Path

import pytest

import indexer
import search
from indexer import IndexNotFound, InvalidQuery, ModelMismatch, ModelNotAvailable
from search import Searcher
from tests.conftest import ROOT


def test_index_then_search_in_process(tmp_path, notes):
    summary = indexer.Indexer(tmp_path / "ix").index_folder(notes)
    assert summary.added == 4
    with search.Searcher(tmp_path / "ix") as searcher:
        response = searcher.search("where do I keep my savings", k=2)
        assert response.results[0].path.endswith("money.txt")
        assert response.to_dict()["results"][0]["rank"] == 1
        static = searcher.search("where do I keep my savings", k=2, mode="static")
        assert static.mode == "static" and len(static.results) == 2
        older = searcher.search("where do I keep my savings", k=2, space="static")
        assert older.mode == "static", "space= is still accepted as the old name of mode="


def test_contextual_space_resolves_the_sense_of_bank(sample_index):
    with Searcher(sample_index) as searcher:
        money = searcher.search("I want to open a savings account at my bank", k=1)
        river = searcher.search("the bank of the river eroded in the flood", k=1)
    assert "finance/" in money.results[0].path
    assert "nature/" in river.results[0].path


def test_a_dense_weight_moves_hybrid_between_its_parts(sample_index):
    # "response" and "work" are common words; the question is about canning seals
    query = "why did the lids not pop down after the jars cooled"
    with Searcher(sample_index) as searcher:
        # passage by passage (`all_chunks`): documents are scored from their passages with
        # a support per mode (search.document_scores), which a dense weight does not move
        contextual = searcher.search(query, k=5, mode="contextual", all_chunks=True)
        lexical = searcher.search(query, k=5, mode="lexical", all_chunks=True)
        all_dense = searcher.search(query, k=5, dense_weight=1.0, all_chunks=True)
        all_lexical = searcher.search(query, k=5, dense_weight=0.0, all_chunks=True)
        adaptive = searcher.search(query, k=5)
        with pytest.raises(InvalidQuery, match="between 0 and 1"):
            searcher.search(query, dense_weight=1.5)
        with pytest.raises(InvalidQuery, match="only applies to hybrid"):
            searcher.search(query, mode="lexical", dense_weight=0.5)
    assert [h.chunk_id for h in all_dense.results] == [h.chunk_id for h in contextual.results]
    assert [h.chunk_id for h in all_lexical.results] == [h.chunk_id for h in lexical.results]
    assert adaptive.results[0].path.endswith("home-canning-seals.md")
    assert all(hit.space == "hybrid" for hit in adaptive.results)


def test_typed_errors(tmp_path, sample_index):
    with pytest.raises(IndexNotFound):
        Searcher(tmp_path / "missing")
    with pytest.raises(ModelMismatch):
        Searcher(sample_index, pooling="max")
    with pytest.raises(ModelMismatch):
        Searcher(sample_index, model="some/other-model")
    with Searcher(sample_index) as searcher:
        with pytest.raises(InvalidQuery):
            searcher.search("")
        with pytest.raises(InvalidQuery):
            searcher.search("bank", k=-1)
        with pytest.raises(InvalidQuery):
            searcher.search("bank", mode="sparse")
    assert issubclass(InvalidQuery, indexer.CtxsearchError)


def test_a_model_that_is_not_on_disk_is_refused_without_downloading(tmp_path, notes):
    with pytest.raises(ModelNotAvailable, match="cannot load model"):
        indexer.Indexer(tmp_path / "ix", model="nobody/no-such-model").index_folder(notes)
    assert not (tmp_path / "ix").exists()


def test_the_write_path_never_imports_the_read_path():
    for path in Path(ROOT, "indexer").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n == "search" or n.startswith("search.") for n in names), path


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def _code_strings(path: Path) -> list[str]:
    """The string literals of a module that are code (SQL, say), not docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings
    ]  # fmt: skip


def test_only_the_store_touches_sqlite_faiss_files_fts5_or_postgresql():
    """Callers go through `indexer.store.backends`: no SQL dialect, FAISS file or FTS5 leaks out.

    The lab (`lab/`, not the product) may use FAISS for its own exact benchmark indexes
    and the store's FTS5 collection for its BM25 baseline; nothing on the product path may.
    """
    store = Path(ROOT, "indexer", "store")
    backend_modules = ("indexer.store.local", "indexer.store.postgres")
    for path in [*Path(ROOT, "indexer").rglob("*.py"), *Path(ROOT, "search").rglob("*.py")]:
        if path.is_relative_to(store):
            continue
        names = _imports(path)
        source = "\n".join(_code_strings(path))
        assert "sqlite3" not in names, path
        assert not re.search(r"fts5|bm25\(|\bPRAGMA\b", source, re.I), path
        # FTS5's MATCH as SQL is written in capitals here; a hit's `match` is not SQL
        assert not re.search(r"\bMATCH\b", source), path
        assert not any(n.split(".")[0] in ("faiss", "psycopg", "pgvector") for n in names), path
        assert not any(n.startswith(backend_modules) for n in names), path


def _product_modules() -> dict[str, Path]:
    """Every module of the product (`indexer`, `search`; not the lab) by dotted name."""
    modules = {}
    for path in [*Path(ROOT, "indexer").rglob("*.py"), *Path(ROOT, "search").rglob("*.py")]:
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _privates_defined(tree: ast.AST) -> set[str]:
    """The private names a module defines: functions, classes, globals, `self._x`."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if _private(name)}


def test_no_module_uses_another_modules_private_names():
    """`from x import _y`, `module._y`, and `thing._y` where `_y` is another module's own
    (`record_runs` once set `indexer._report` and called `indexer._encode_and_store`)."""
    modules = _product_modules()
    trees = {name: ast.parse(path.read_text()) for name, path in modules.items()}
    defined = {name: _privates_defined(tree) for name, tree in trees.items()}
    everyone = set().union(*defined.values())
    uses = []
    for name, tree in trees.items():
        module_aliases = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in modules:
                for alias in node.names:
                    if _private(alias.name):
                        uses.append(f"{name}: from {node.module} import {alias.name}")
                    elif f"{node.module}.{alias.name}" in modules:
                        module_aliases.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                module_aliases |= {
                    alias.asname or alias.name.split(".")[0]
                    for alias in node.names
                    if alias.name in modules
                }
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            of_a_module = isinstance(owner, ast.Name) and owner.id in module_aliases
            anothers = node.attr in everyone and node.attr not in defined[name]
            if of_a_module or anothers:
                uses.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert uses == []


def _import_graph() -> dict[str, set[str]]:
    """Each module of `indexer` and `search` with the product modules it imports, at any
    depth of its code (inside functions and `TYPE_CHECKING` blocks too)."""
    files = {}
    for package in ("indexer", "search"):
        for path in Path(ROOT, package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names if alias.name in files}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:  # `from package import module` names the module
                    submodule = f"{node.module}.{alias.name}"
                    found.add(submodule if submodule in files else node.module)
        graph[name] = (found & files.keys()) - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return groups


KNOWN_CYCLES: list[list[str]] = []


def test_no_module_of_the_product_imports_itself_through_others():
    assert [group for group in _cycles(_import_graph()) if group not in KNOWN_CYCLES] == []


# The lab (`lab/`) and its extras' packages. The product never imports them, at any depth
# of its code: the lab's commands reach the CLI through entry points (`search.cli.extensions`).
LAB_ONLY = ("lab", "scipy", "matplotlib", "sklearn", "gensim", "model2vec")


def _lab_only(names: list[str]) -> list[str]:
    return [n for n in names if any(n == p or n.startswith(p + ".") for p in LAB_ONLY)]


def test_the_product_never_imports_the_lab_or_its_packages():
    """The lab depends on the product (`indexer`, `search`), never the reverse; searching
    and indexing need neither the lab nor the packages of its extras."""
    assert Path(ROOT, "lab").is_dir()
    for path in _product_modules().values():
        assert _lab_only(_imports(path)) == [], path
