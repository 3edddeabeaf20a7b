"""Set-based inserts on PostgreSQL: ``INSERT … SELECT … FROM generate_series(…)``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from django.db import DatabaseError, models, transaction

from catalog_admin.seeding.context import Context
from catalog_admin.seeding.rows import _default, available_fields

__all__ = ("insert_params", "insert_select", "literal", "skip_foreign_key_checks", "sql_row")


def skip_foreign_key_checks(ctx: Context) -> bool:
    """
    Skip PostgreSQL's per-row foreign-key triggers for the rest of the transaction, when permitted.

    Hive's foreign keys cost one trigger query per inserted row (the larger part of a bulk
    insert). The bulk rows reference only ids reserved and written in this run, so they are
    consistent by construction. Needs superuser or ``GRANT SET ON PARAMETER session_replication_role``.
    """
    try:
        with transaction.atomic(using=ctx.connection.alias):
            ctx.cursor.execute("SET LOCAL session_replication_role = replica")
    except DatabaseError:
        return False
    return True


def literal(value: Any) -> str:
    """An SQL literal for PostgreSQL; strings with a backslash use E'' so the server's settings cannot matter."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value).replace("'", "''")
    if "\\" in text:
        return "E'" + text.replace("\\", "\\\\") + "'"
    return f"'{text}'"


def sql_row(row: dict[str, Any], **exprs: str) -> dict[str, str]:
    """``row``'s values as literals, with ``exprs`` (SQL expressions over the series) taking precedence."""
    return {key: literal(value) for key, value in row.items()} | exprs


def _pick(values: Iterable[Any], index: str) -> str:
    """The ``index``-th (0-based SQL expression) of constant ``values``."""
    return "(ARRAY[" + ", ".join(literal(v) for v in values) + f"])[{index} + 1]"


def _series(rows: int) -> str:
    """``rows`` rows numbered ``x`` = 0 … rows - 1, streamed in that order (not materialized first)."""
    return f"(SELECT generate_series(0, {rows - 1}) AS x) AS series"


def insert_select(ctx: Context, model: type[models.Model], exprs: dict[str, str], rows: int) -> Counter[str]:
    """One ``INSERT … SELECT`` over ``_series(rows)``; unnamed fields get their default or NULL."""
    chosen = [
        (f, exprs.get(f.name, literal(_default(f))))
        for f in available_fields(ctx, model)
        if f.name in exprs or _default(f) is not None
    ]
    columns = ", ".join(ctx.quote(f.column) for f, _ in chosen)
    select = ", ".join(expr for _, expr in chosen)
    ctx.cursor.execute(f"INSERT INTO {ctx.table(model)} ({columns}) SELECT {select} FROM {_series(rows)}")
    return Counter({model._meta.db_table: ctx.cursor.rowcount})


def insert_params(
    ctx: Context, model: type[models.Model], owner: tuple[str, int], params: dict[str, str], count: int
) -> Counter[str]:
    """``params`` for each of ``count`` owners (ids ``owner[1]`` + g), keys ascending within an owner."""
    keys = sorted(params)
    per = len(keys)
    exprs = {owner[0]: f"{owner[1]} + x / {per}", "key": _pick(keys, f"x % {per}")}
    exprs["value"] = _pick([params[k] for k in keys], f"x % {per}")
    return insert_select(ctx, model, exprs, count * per)
