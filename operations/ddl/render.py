"""The one place that renders identifiers, literals and clauses of Hive DDL."""

from __future__ import annotations

__all__ = ("quote_ident", "quote_string", "render_partition_spec", "render_properties")


def quote_ident(name: str) -> str:
    """A Hive identifier in backticks (a backtick inside is doubled)."""
    return "`" + name.replace("`", "``") + "`"


# Characters written as backslash escapes, the ones the parser reads back (a tab or newline stays visible).
_ESCAPED = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


def quote_string(value: str) -> str:
    """A Hive string literal in single quotes with backslash escapes (also for newline, tab, CR and NUL)."""
    return "'" + "".join(_ESCAPED.get(char, char) for char in value) + "'"


def render_properties(properties: tuple[tuple[str, str], ...]) -> str:
    return "(" + ", ".join(f"{quote_string(k)}={quote_string(v)}" for k, v in properties) + ")"


def render_partition_spec(spec: tuple[tuple[str, str], ...]) -> str:
    return "(" + ", ".join(f"{quote_ident(k)}={quote_string(v)}" for k, v in spec) + ")"
