"""The layers of ``docs/architecture.md`` hold: imports go down, and no modules import each other in a circle.

Every import counts: module level, function-local and type-only (``if TYPE_CHECKING:``). A type-only import runs no
code, so it cannot close an import cycle; it still names a layer, so it goes down like any other.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("catalog_admin", "operations")
DOC = ROOT / "docs" / "architecture.md"

# Top to bottom, as the layer table of docs/architecture.md lists them. A module belongs to the layer of its longest
# prefix; a new module that matches none fails test_every_module_has_a_layer.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("composition root", ("catalog_admin.settings", "catalog_admin.settings_production", "catalog_admin.urls",
                          "catalog_admin.wsgi", "catalog_admin.apps", "operations.apps", "operations.urls",
                          "catalog_admin.tokens.apps")),
    ("commands", ("catalog_admin.management", "operations.management", "catalog_admin.serving")),
    ("tooling", ("catalog_admin.seeding",)),
    ("pages and API", ("catalog_admin.views", "catalog_admin.api", "operations.views", "operations.api",
                       "operations.admin", "catalog_admin.templatetags", "operations.templatetags", "operations.forms",
                       "catalog_admin.context_processors", "catalog_admin.middleware", "operations.extensions",
                       "catalog_admin.utils.paging")),
    ("sign-in", ("catalog_admin.auth",)),
    ("tasks and workers", ("operations.tasks", "operations.housekeeping")),
    ("services (writes)", ("operations.services", "operations.merge", "operations.notifications")),
    ("the console's reads", ("operations.selectors", "operations.work", "operations.guided",
                             "operations.guided_create_table", "operations.guided_databases", "operations.metrics",
                             "operations.access_history")),
    ("lifecycle", ("operations.lifecycle", "operations.policy")),
    ("Spark engine", ("operations.spark",)),
    ("planners (pure reads)", ("operations.planners", "operations.dependent_views")),
    ("notification events", ("operations.events",)),
    ("table state", ("operations.table_state",)),
    ("DDL parser", ("operations.ddl", "operations.ddl.parser", "operations.ddl.create_table",
                    "operations.ddl.database_parser")),
    ("change kinds (the seam)", ("operations.changes",)),
    ("plans and pure checks", ("operations.preview", "operations.specs", "operations.risk", "operations.staleness",
                               "operations.containment", "operations.rules", "operations.spark_schema",
                               "operations.estimates", "operations.database_specs", "operations.privilege_specs",
                               "operations.collector")),
    ("DDL grammar", ("operations.ddl.types", "operations.ddl.render", "operations.ddl.errors")),
    ("metastore reads", ("catalog_admin.selectors",)),
    ("models", ("catalog_admin.models", "operations.models", "operations.choices", "operations.sql",
                "catalog_admin.ids", "catalog_admin.routers", "catalog_admin.backends", "catalog_admin.metastore_ddl",
                "catalog_admin.search_index", "catalog_admin.tokens")),
    ("Hive knowledge and files", ("catalog_admin.hive", "catalog_admin.schema", "catalog_admin.metastores",
                                  "catalog_admin.locations", "catalog_admin.object_stores",
                                  "catalog_admin.filesystem_options")),
    ("utilities", ("catalog_admin.utils", "catalog_admin.errors", "catalog_admin.db", "catalog_admin.secrets",
                   "catalog_admin.roles", "catalog_admin.converters", "catalog_admin.extensions",
                   "catalog_admin.mail_config")),
)  # fmt: skip

# Not the seam's: upward or circular edges kept on purpose, each with its reason.
KNOWN_EDGES = {
    # A metastore queryset defers the columns its schema lacks, so it asks the registry for the schema (local).
    ("catalog_admin.models.base", "catalog_admin.selectors.metastores"): "models defer by the metastore's schema",
    # filesystem_for picks the object-store filesystem, which builds on locations' digests and entries (local).
    ("catalog_admin.locations", "catalog_admin.object_stores"): "the filesystem factory names its implementations",
}
ALLOWED = KNOWN_EDGES.keys()


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    type_only: bool


@cache
def modules() -> dict[str, Path]:
    """Every module of the two packages (migrations aside) by dotted name; a package by its own name."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "migrations" in parts:
                continue
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def layer_of(module: str) -> int | None:
    """The index in :data:`LAYERS` of ``module``'s longest matching prefix."""
    best: tuple[int, int] | None = None
    for index, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def imports_of(module: str, source: str, known: Iterable[str]) -> list[Import]:
    """The imports of ``module`` that name one of ``known`` (``from pkg import name`` names ``pkg.name`` when that
    is a module, else ``pkg``)."""
    known = set(known)
    tree = ast.parse(source)
    type_only = {id(n) for node in ast.walk(tree) if _is_type_checking(node) for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            target = _known_prefix(name, known)
            if target and target != module:
                found.append(Import(module, target, node.lineno, id(node) in type_only))
    return found


def _is_type_checking(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _known_prefix(name: str, known: set[str]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


@cache
def all_imports() -> tuple[Import, ...]:
    found = modules()
    return tuple(i for m, path in found.items() for i in imports_of(m, path.read_text(), found))


def upward(imports: Iterable[Import]) -> list[str]:
    """Each import that names a module of a higher layer than its own."""
    wrong = []
    for i in imports:
        source, target = layer_of(i.source), layer_of(i.target)
        if source is not None and target is not None and target < source and (i.source, i.target) not in ALLOWED:
            wrong.append(f"{i.source}:{i.line} ({LAYERS[source][0]}) imports {i.target} ({LAYERS[target][0]})")
    return wrong


def cycles(imports: Iterable[Import], packages: Iterable[str] = ()) -> list[list[str]]:
    """The import cycles (strongly connected components of two or more modules) that run code: type-only imports,
    a package ``__init__``'s re-exports of its own submodules and the allowed edges left out."""
    edges: dict[str, set[str]] = defaultdict(set)
    packages = set(packages)
    for i in imports:
        reexport = i.source in packages and i.target.startswith(i.source + ".")
        if not (i.type_only or reexport or (i.source, i.target) in ALLOWED):
            edges[i.source].add(i.target)
    return [sorted(c) for c in _components(edges) if len(c) > 1]


def _components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(set(edges) | {t for ts in edges.values() for t in ts}):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    found.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _packages() -> set[str]:
    return {m for m, path in modules().items() if path.name == "__init__.py"}


def _doc_layers() -> list[tuple[str, list[str]]]:
    """The layer table of docs/architecture.md: each row's layer and the paths named in its "where" cell."""
    text = DOC.read_text().split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    return [(layer.strip(), re.findall(r"`([^`]+)`", where)) for layer, where in rows[1:]]


def _module_of_path(path: str) -> str | None:
    """``operations/services/`` → ``operations.services``; a path outside the two packages → None."""
    dotted = path.rstrip("/").removesuffix(".py").replace("/", ".")
    return dotted if dotted in modules() else None


# --- the checks find what they look for ---


def test_an_upward_import_is_found_with_its_line() -> None:
    """A model importing a service is named, module level or inside a function."""
    # given
    source = "import os\n\ndef f():\n    from operations.services.alter import alter_execute\n"

    # when
    found = upward(imports_of("operations.models.jobs", source, modules()))

    # then
    assert found == [
        "operations.models.jobs:4 (models) imports operations.services.alter (services (writes))",
    ]


def test_a_cycle_is_found_unless_an_edge_is_type_only() -> None:
    """Two modules importing each other are a cycle; when one of the two imports is type-only they are not."""
    # given
    known = ["operations.rules", "operations.specs"]
    a = imports_of("operations.rules", "from operations.specs import AlterSpec", known)
    b = imports_of("operations.specs", "def f():\n    from operations.rules import Finding", known)
    b_typed = imports_of("operations.specs", "if TYPE_CHECKING:\n    from operations.rules import Finding", known)

    # when / then
    assert cycles(a + b) == [["operations.rules", "operations.specs"]]
    assert cycles(a + b_typed) == []


# --- the project ---


def test_every_module_has_a_layer() -> None:
    """Each module of catalog_admin and operations is in one layer of the table (the two packages' roots aside)."""
    # when
    missing = sorted(m for m in modules() if m not in PACKAGES and layer_of(m) is None)

    # then
    assert missing == [], "add each to LAYERS here and to the layer table in docs/architecture.md"


def test_imports_go_down_the_layers() -> None:
    """No module imports a module of a layer above its own (function-local and type-only imports included)."""
    # when
    wrong = upward(all_imports())

    # then
    assert wrong == []


def test_no_import_cycle() -> None:
    """No modules of catalog_admin and operations import each other in a circle, but for the allowed edges."""
    # when
    found = cycles(all_imports(), _packages())

    # then
    assert found == []


@pytest.mark.parametrize("edge", sorted(ALLOWED))
def test_each_allowed_edge_is_still_there(edge: tuple[str, str]) -> None:
    """An allowed edge that no import makes any more is taken off the list."""
    assert edge in {(i.source, i.target) for i in all_imports()}


def test_the_documented_layers_are_these_in_this_order() -> None:
    """docs/architecture.md's layer table names these layers top to bottom, and every module path it names in a
    layer's row belongs to that layer here."""
    # given
    documented = _doc_layers()

    # when
    misplaced = [
        (layer, path)
        for layer, paths in documented
        for path in paths
        if (module := _module_of_path(path)) is not None and LAYERS[layer_of(module) or 0][0] != layer
    ]

    # then
    assert [layer for layer, _paths in documented] == [name for name, _prefixes in LAYERS]
    assert misplaced == []
