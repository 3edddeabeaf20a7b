"""
SQL pieces of the merge's PostgreSQL-to-PostgreSQL pipe (``COPY (SELECT …) TO STDOUT`` into ``COPY … FROM STDIN``):
string constants, and the location rules as ``catalog_admin.hive.locations.rewrite_prefix`` applies them, so that no
row of a table with locations has to pass through Python.
"""

from __future__ import annotations

from catalog_admin.hive.locations import normalize_location

__all__ = ("PYTHON_WHITESPACE", "literal", "location_rewrite")

# What ``str.strip()`` removes (``str.isspace``), so that PostgreSQL's ``btrim`` strips exactly the same characters.
PYTHON_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def literal(text: str) -> str:
    """A string constant in a statement that takes driver parameters (``%`` doubled)."""
    return "'" + text.replace("'", "''").replace("%", "%%") + "'"


def location_rewrite(column: str, rules: list[tuple[str, str]], alias: str) -> tuple[str, str]:
    """``(laterals, expression)``: the first of ``rules`` (``(old, new)``, the longest ``old`` first) that applies to
    the text ``column``, rewritten as ``rewrite_prefix`` does; unchanged, as stored, when none applies (NULL and empty
    stay). ``laterals`` go after the statement's ``FROM`` table: they compute the normalized location once per row
    (``normalize_location``, step by step; ``OFFSET 0`` keeps PostgreSQL from inlining a step into every use)."""
    t, u = f"{alias}_t", f"{alias}_u"
    laterals = (
        f"CROSS JOIN LATERAL (SELECT btrim({column}, {literal(PYTHON_WHITESPACE)}) AS t OFFSET 0) {t} "
        # "/x" -> "file:/x"; then "file://localhost/x" -> "file:/x", "file:///x" and "file://x" -> "file:/x"
        f"CROSS JOIN LATERAL (SELECT regexp_replace(regexp_replace(regexp_replace({t}.t, '^/', 'file:/'), "
        f"'^file://(?!localhost)/*', 'file:/'), '^file://localhost', 'file:') AS u OFFSET 0) {u} "
        f"CROSS JOIN LATERAL (SELECT CASE WHEN length({u}.u) > {len('file:/')} THEN rtrim({u}.u, '/') "
        f"ELSE {u}.u END AS n OFFSET 0) {alias}"
    )
    cases = []
    for old, new in sorted(rules, key=lambda rule: -len(rule[0])):
        parent = normalize_location(old)
        under = f"{alias}.n = {literal(parent)} OR left({alias}.n, {len(parent) + 1}) = {literal(parent + '/')}"
        cases.append(f"WHEN {under} THEN {literal(new)} || substr({alias}.n, {len(old) + 1})")
    expression = f"CASE WHEN {column} IS NULL OR {column} = '' THEN {column} {' '.join(cases)} ELSE {column} END"
    return laterals, expression
