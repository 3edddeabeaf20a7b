"""
Hive's ALTER TABLE rules (HiveAlterHandler and friends), version by version, as pure functions.

Each check returns :class:`Finding` values with the rule number from ``hive-alter-rules.md`` and a
Hive-like message. 2.3 follows the 3.1.1 reading unless noted: the handler did not change between them
for these rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from catalog_admin.schema import SchemaVersion

__all__ = (
    "Finding",
    "canonical_type",
    "check_column_types",
    "check_partition_keys",
    "check_table_name",
    "incompatible_columns",
    "is_known_type",
    "types_compatible",
)

V4 = SchemaVersion(4, 0, 0, "alpha", 1)

# ColumnType.AllTypes: primitives, complex kinds and bookkeeping words.
KNOWN_TYPES = frozenset(
    {
        "void",
        "boolean",
        "tinyint",
        "smallint",
        "int",
        "integer",
        "bigint",
        "float",
        "double",
        "real",
        "string",
        "varchar",
        "char",
        "date",
        "datetime",
        "timestamp",
        "timestamplocaltz",
        "decimal",
        "numeric",
        "binary",
        "interval_year_month",
        "interval_day_time",
        "array",
        "map",
        "struct",
        "uniontype",
        "unknown",
        "timestamp with local time zone",
    }
)
NUMERIC_ORDER = ("tinyint", "smallint", "int", "bigint", "decimal", "float", "double")
STRING_FAMILY = frozenset({"string", "varchar", "char"})
DATE_FAMILY = frozenset({"date", "datetime", "timestamp"})
COMPLEX = frozenset({"array", "map", "struct", "uniontype"})
# Java's \w (ASCII only), matched against the whole name as Pattern.matches does.
_NAME_CHARS_3 = re.compile(r"[\w/]+", re.ASCII)
_NAME_CHARS_4 = re.compile(r"""[\w "%&'()*+,\-./:;<=>?\[\]|{}$^!~#@`]+""", re.ASCII)


@dataclass(frozen=True)
class Finding:
    """A rule that blocks a change (``blocker``) or deserves attention (``warning``)."""

    code: str
    rule: str
    message: str
    severity: str = "blocker"


def check_table_name(name: str, version: SchemaVersion) -> list[Finding]:
    """Rule 2.3: the new table name must be a valid object name."""
    pattern = _NAME_CHARS_4 if version >= V4 else _NAME_CHARS_3
    if pattern.fullmatch(name):
        return []
    return [Finding("invalid_name", "2.3", f"{name} is not a valid object name")]


def canonical_type(type_name: str) -> str:
    """Rule 5.3: lower-case, cut at the first non-word character; integer→int, numeric→decimal."""
    lowered = type_name.strip().lower()
    match = re.match(r"\w+", lowered)
    head = match.group() if match else lowered
    return {"integer": "int", "numeric": "decimal"}.get(head, head)


def is_known_type(type_name: str) -> bool:
    """Rule 2.4: the first token of the type must be a known Hive type name."""
    lowered = type_name.strip().lower()
    if lowered == "<derived from deserializer>":
        return True
    match = re.match(r"\w+|[^\w]+", lowered)
    return bool(match) and match.group() in KNOWN_TYPES


def types_compatible(old: str, new: str, version: SchemaVersion) -> bool:
    """Rule 5.4: whether a column may change from ``old`` to ``new`` (by canonical names)."""
    a, b = canonical_type(old), canonical_type(new)
    if a == b or a == "void":
        return b not in COMPLEX or a == b
    if a in COMPLEX or b in COMPLEX:
        return False
    if a in NUMERIC_ORDER:
        if b in STRING_FAMILY:
            return True
        return b in NUMERIC_ORDER and NUMERIC_ORDER.index(b) > NUMERIC_ORDER.index(a)
    if a in STRING_FAMILY:
        return b in STRING_FAMILY or (b == "double" and version < V4)
    if a in DATE_FAMILY:
        return b in STRING_FAMILY
    return False


def incompatible_columns(old: list[tuple[str, str]], new: list[tuple[str, str]], version: SchemaVersion) -> list[str]:
    """Rule 5.2: names of new columns whose type is incompatible with the old column at the same position."""
    return [new[i][0] for i in range(min(len(old), len(new))) if not types_compatible(old[i][1], new[i][1], version)]


def check_column_types(
    old: list[tuple[str, str]], new: list[tuple[str, str]], version: SchemaVersion, *, is_view: bool
) -> list[Finding]:
    """Rules 2.4 and 5: every new type is known, and no position changes to an incompatible type."""
    findings = [Finding("invalid_type", "2.4", f"Invalid column type: {t}") for _n, t in new if not is_known_type(t)]
    if findings or is_view:
        return findings
    bad = incompatible_columns(old, new, version)
    if bad:
        findings.append(
            Finding(
                "incompatible_column_type",
                "5.6",
                "The following columns have types incompatible with the existing columns in their respective "
                "positions :\n" + ",".join(bad),
            )
        )
    return findings


def check_partition_keys(old: list[str], new: list[str], *, is_view: bool) -> list[Finding]:
    """Rule 6.2: partition keys keep their number, names and order."""
    if is_view or old == new:
        return []
    return [Finding("partition_keys_changed", "6.3", "partition keys can not be changed.")]
