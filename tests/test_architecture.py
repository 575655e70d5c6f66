"""The floors of the code and the rules of the house, held by parsing every module.

Data flows one way (docs/how-it-works.md, "Floors"): files are read (`reading`) and split
(`splitting`); records are checked (`records`); the store keeps documents, passages and
vectors; encoders make the vectors; runs write (`runs`, and `watching`, which starts runs
when files change); the read core (`search/`) searches what the store holds; the edges
(the CLI, HTTP and MCP) call both sides; the lab stands on the product. Imports at any
depth of a module count: inside functions and `TYPE_CHECKING` blocks too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT

# Bottom up: each floor, the files it holds (a folder ends in `/`; the longest match
# names a file's floor), and the floors below it that it may import besides its own.
# The package doors `indexer/__init__.py` and `search/__init__.py` also name their public
# classes by string, imported on first use: those names are the public API, not arrows.
# fmt: off
FLOORS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "base":      (("indexer/__init__.py", "indexer/errors.py", "indexer/config.py",
                   "indexer/faults.py", "indexer/durable.py", "indexer/spaces.py",
                   "indexer/terms.py", "indexer/version.py"),
                  ()),
    "reading":   (("indexer/reading/",),
                  ("base",)),
    "splitting": (("indexer/splitting/",),
                  ("base", "reading")),
    "records":   (("indexer/records/",),
                  ("base",)),
    "store":     (("indexer/store/",),
                  ("base", "reading", "splitting", "records")),
    "encoders":  (("indexer/encoders/",),
                  ("base", "store")),
    "runs":      (("indexer/runs/", "indexer/removal.py"),
                  ("base", "reading", "splitting", "records", "store", "encoders")),
    "watching":  (("indexer/watching/",),
                  ("base", "reading", "splitting", "records", "store", "encoders", "runs")),
    "read core": (("search/",),
                  ("base", "reading", "splitting", "records", "store", "encoders")),
    "edges":     (("search/__main__.py", "search/cli/", "search/server/", "search/mcp_server/"),
                  ("base", "reading", "splitting", "records", "store", "encoders", "runs",
                   "watching", "read core")),
    "lab":       (("lab/",),
                  ("base", "reading", "splitting", "records", "store", "encoders", "runs",
                   "watching", "read core", "edges")),
}
# fmt: on
PRODUCT = [floor for floor in FLOORS if floor != "lab"]
INDEXER = ["base", "reading", "splitting", "records", "store", "encoders", "runs", "watching"]

# The rules of the house: (rule, floors, floors they never import).
RULES = [
    ("the store never imports runs", ["store"], ["runs", "watching"]),
    ("reading never imports splitting", ["reading"], ["splitting"]),
    ("the read core never imports runs", ["read core"], ["runs", "watching"]),
    ("the write path never imports the read path", INDEXER, ["read core", "edges"]),
    ("the product never imports the lab", PRODUCT, ["lab"]),
]


def _module_files() -> dict[str, Path]:
    """Every module of the product and the lab, by dotted name."""
    files = {}
    for package in ("indexer", "search", "lab"):
        for path in Path(ROOT, package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def _floor_of(path: Path) -> str | None:
    """The floor that holds the file at `path` (None: no floor names it)."""
    relative = path.relative_to(ROOT).as_posix()
    matches = [
        (len(entry), floor)
        for floor, (entries, _) in FLOORS.items()
        for entry in entries
        if relative == entry or (entry.endswith("/") and relative.startswith(entry))
    ]
    return max(matches)[1] if matches else None


def _product_files() -> dict[str, Path]:
    """Every module of the product (`indexer`, `search`; not the lab) by dotted name."""
    return {name: path for name, path in _module_files().items() if _floor_of(path) != "lab"}


def _imported_modules(path: Path, files: dict[str, Path]) -> list[tuple[int, str]]:
    """The modules of `files` that the module at `path` imports, with the line of each:
    `from package import module` names the module, `from module import name` the module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {(node.lineno, alias.name) for alias in node.names if alias.name in files}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                name = submodule if submodule in files else node.module
                if name in files:
                    found.add((node.lineno, name))
    return sorted(found)


def _imports(path: Path) -> list[str]:
    """Every module name a file imports (absolute imports), the product's or not."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_every_module_stands_on_a_floor():
    files = _module_files()
    assert [str(path) for path in files.values() if _floor_of(path) is None] == []
    named = {entry for entries, _ in FLOORS.values() for entry in entries}
    assert [entry for entry in named if not Path(ROOT, entry).exists()] == []


def test_every_import_goes_down_to_a_floor_below_or_stays_on_its_own():
    files = _module_files()
    upward = []
    for path in files.values():
        floor = _floor_of(path)
        if floor is None:
            continue  # said by the test above
        allowed = {floor, *FLOORS[floor][1]}
        for line, module in _imported_modules(path, files):
            other = _floor_of(files[module])
            if other not in allowed:
                where = path.relative_to(ROOT)
                upward.append(f"{where}:{line}: {module} ({floor} imports {other})")
    assert upward == []


def test_the_floors_keep_the_rules_of_the_house():
    """A floor's row cannot be widened past a rule without the rule being dropped here."""
    broken = [
        f"{rule}: {floor} may import {other}"
        for rule, floors, never in RULES
        for floor in floors
        for other in never
        if other in FLOORS[floor][1]
    ]
    assert broken == []


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


def test_no_module_of_the_product_imports_itself_through_others():
    files = _product_files()
    graph = {
        name: {module for _, module in _imported_modules(path, files)} - {name}
        for name, path in files.items()
    }
    assert _cycles(graph) == []


# The lab's extras' packages: the product never imports them, at any depth of its code
# (the lab's commands reach the CLI through entry points, `search.cli.extensions`).
LAB_ONLY = ("scipy", "matplotlib", "sklearn", "gensim", "model2vec")


def test_the_product_never_imports_the_packages_of_the_labs_extras():
    """Searching and indexing need neither the lab nor the packages of its extras."""
    for path in _product_files().values():
        names = _imports(path)
        assert [n for n in names if n.split(".")[0] in LAB_ONLY] == [], path


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
    for path in _product_files().values():
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
    (a run once set `indexer._report` and called `indexer._encode_and_store`)."""
    modules = _product_files()
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
