"""Version knowledge has one home: no console module outside ``catalog_admin/hive/versions.py`` compares versions.

A rule that depends on the Hive version asks a named capability (``metastore.schema.capabilities.<name>``); this test
reads every module's syntax tree and names each place that compares a version tuple, a version's parts or a version
string instead.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("catalog_admin", "operations")
HOME = "catalog_admin/hive/versions.py"
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
VERSION_PARTS = {"major", "minor", "patch", "line", "pre_tag", "pre_number"}
BOUNDARIES = {"HIVE_3", "HIVE_4", "HIVE_4_0_0"}
VERSION_TEXT = re.compile(r"^\d+(\.\d+)*\.?$")


def _modules() -> list[str]:
    paths = (p.relative_to(ROOT).as_posix() for package in PACKAGES for p in (ROOT / package).rglob("*.py"))
    return sorted(p for p in paths if p != HOME)


def _names_a_version(node: ast.expr) -> bool:
    """Whether ``node`` is a version or a part of one: ``version``, ``x.schema_version``, ``v.major``, ``HIVE_4``."""
    if isinstance(node, ast.Attribute):
        return node.attr in VERSION_PARTS or "version" in node.attr.lower() or node.attr in BOUNDARIES
    if isinstance(node, ast.Name):
        return "version" in node.id.lower() or node.id in BOUNDARIES
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Attribute) and node.func.attr == "parse" and _names_a_version(node.func.value)
    return False


def _is_version_literal(node: ast.expr) -> bool:
    """``(3, 0)``, ``4`` or ``"2.3"``: a literal a version is compared with."""
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts)
    if isinstance(node, ast.Constant):
        return type(node.value) is int or (isinstance(node.value, str) and bool(VERSION_TEXT.match(node.value)))
    return False


def _comparison(node: ast.Compare) -> bool:
    operands = [node.left, *node.comparators]
    if any(isinstance(op, ORDERING) for op in node.ops):
        versioned = any(_names_a_version(o) for o in operands)
        tuple_literal = any(isinstance(o, ast.Tuple) and _is_version_literal(o) for o in operands)
        return versioned or tuple_literal
    return any(_names_a_version(o) for o in operands) and any(_is_version_literal(o) for o in operands)


def _startswith_version(node: ast.Call) -> bool:
    """``raw.startswith("2.")``: a version string compared by its text."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr in {"startswith", "endswith"} and node.args):
        return False
    first = node.args[0]
    texts = first.elts if isinstance(first, ast.Tuple) else [first]
    return any(isinstance(t, ast.Constant) and isinstance(t.value, str) and VERSION_TEXT.match(t.value) for t in texts)


def version_comparisons(source: str) -> list[str]:
    """Each place in ``source`` that compares a version, as ``line: code``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            (isinstance(node, ast.Compare) and _comparison(node))
            or (isinstance(node, ast.Call) and _startswith_version(node))
            or (isinstance(node, ast.ImportFrom) and any(a.name in BOUNDARIES for a in node.names))
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize(
    "source",
    [
        "ok = version >= HIVE_4",
        "ok = metastore.schema.version.line >= (3, 0)",
        "ok = version.major >= 4",
        "ok = raw.startswith('2.')",
        "ok = schema_version == '3.1.0'",
        "ok = (3, 1) <= line",
        "from catalog_admin.hive.versions import HIVE_3",
    ],
)
def test_the_check_names_each_kind_of_version_comparison(source: str) -> None:
    """The check finds tuple, part, boundary and text comparisons (else the test below would pass vacuously)."""
    assert len(version_comparisons(source)) == 1


def test_the_check_leaves_capabilities_and_other_comparisons_alone() -> None:
    """Asking a capability, or comparing counts and names, is not a version comparison."""
    # given
    source = "a = caps.write_ids and len(rows) >= 4 and name == 'x' and version.line_name\nb = count > 0"

    # when / then
    assert version_comparisons(source) == []


@pytest.mark.parametrize("module", _modules())
def test_no_module_outside_versions_compares_versions(module: str) -> None:
    """Every version-dependent rule asks ``Capabilities``: a new Hive line is a change to versions.py only."""
    # when
    found = version_comparisons((ROOT / module).read_text())

    # then
    assert found == [], f"{module} compares versions; name the capability in {HOME}: {found}"
