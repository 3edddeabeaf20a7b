"""Writing planned rows with batched ``executemany``, only the columns the schema version has."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from collections.abc import Sequence as Seq
from itertools import islice
from typing import Any

from django.db import models

from catalog_admin.schema import field_available, model_available
from catalog_admin.seeding.context import BATCH_SIZE, Context

__all__ = ("available_fields", "write_rows")


def available_fields(ctx: Context, model: type[models.Model]) -> list[models.Field]:
    return [f for f in model._meta.concrete_fields if field_available(f, ctx.version)]


def write_rows(ctx: Context, order: Seq[type[models.Model]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for model in order:
        rows = ctx.rows.get(model)
        if rows and model_available(model, ctx.version):
            counts[model._meta.db_table] += _insert_rows(ctx, model, rows)
    return counts


def _insert_rows(ctx: Context, model: type[models.Model], rows: list[dict[str, Any]]) -> int:
    fields = available_fields(ctx, model)
    columns = ", ".join(ctx.quote(f.column) for f in fields)
    sql = f"INSERT INTO {ctx.table(model)} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
    values: Iterator[list[Any]] = ([ctx.plan.resolve(row.get(f.name, _default(f))) for f in fields] for row in rows)
    while chunk := list(islice(values, BATCH_SIZE)):
        ctx.cursor.executemany(sql, chunk)
    return len(rows)


def _default(field_: models.Field) -> Any:
    return field_.default if field_.has_default() and not callable(field_.default) else None
