"""The one place that renders identifiers, literals and clauses of Hive DDL."""

from __future__ import annotations

__all__ = ("quote_ident", "quote_string", "render_partition_spec", "render_properties")


def quote_ident(name: str) -> str:
    """A Hive identifier in backticks (a backtick inside is doubled)."""
    return "`" + name.replace("`", "``") + "`"


def quote_string(value: str) -> str:
    """A Hive string literal in single quotes with backslash escapes."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def render_properties(properties: tuple[tuple[str, str], ...]) -> str:
    return "(" + ", ".join(f"{quote_string(k)}={quote_string(v)}" for k, v in properties) + ")"


def render_partition_spec(spec: tuple[tuple[str, str], ...]) -> str:
    return "(" + ", ".join(f"{quote_ident(k)}={quote_string(v)}" for k, v in spec) + ")"
