"""The project's layering: catalog_admin never depends on operations except in the composition root."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPOSITION_ROOT = {"catalog_admin/settings.py", "catalog_admin/urls.py"}
OPERATIONS_TAGS = {"changes"}


def _imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


def _catalog_admin_modules() -> list[str]:
    paths = (p.relative_to(ROOT).as_posix() for p in (ROOT / "catalog_admin").rglob("*.py"))
    return sorted(p for p in paths if p not in COMPOSITION_ROOT)


def _templates_outside_operations() -> list[str]:
    templates = ROOT / "templates"
    return sorted(p.relative_to(ROOT).as_posix() for p in templates.rglob("*.html") if "operations" not in p.parts)


@pytest.mark.parametrize("module", _catalog_admin_modules())
def test_catalog_admin_modules_do_not_import_operations(module: str) -> None:
    """Only the composition root (settings, root urls) names operations; the app below it does not."""
    # when
    imported = _imported_modules(ROOT / module)

    # then
    assert not {m for m in imported if m == "operations" or m.startswith("operations.")}


@pytest.mark.parametrize("template", _templates_outside_operations())
def test_shared_templates_do_not_load_operations_tags_or_routes(template: str) -> None:
    """catalog_admin's and the project's templates reach operations only through page slots."""
    # given
    text = (ROOT / template).read_text()

    # when
    loaded = {name for line in re.findall(r"{%\s*load\s+([^%]+)%}", text) for name in line.split()}

    # then
    assert not loaded & OPERATIONS_TAGS
    assert "'operations:" not in text and '"operations:' not in text
