"""Id reservation: SEQUENCE_TABLE blocks through the one allocator (catalog_admin.ids), Hive's ACID counters."""

from __future__ import annotations

from catalog_admin.ids import allocate_ids
from catalog_admin.models import Transaction
from catalog_admin.schema import model_available
from catalog_admin.seeding.context import COUNTER_SPACES, SEQUENCE_SPACES, Context, Source

__all__ = ("reserve_ids",)


def reserve_ids(ctx: Context) -> None:
    """Reserve one block per id space for everything planned (NEXT_VAL is raised once per space)."""
    for space, count in sorted(ctx.plan.counts.items()):
        if count:
            ctx.plan.bases[space] = _reserve(ctx, space, count)


def _reserve(ctx: Context, space: str, count: int) -> int:
    if space in SEQUENCE_SPACES:
        return allocate_ids(ctx.connection.alias, SEQUENCE_SPACES[space][0][0], count)
    floor = _next_after_max(ctx, COUNTER_SPACES[space][1])
    table = _actual_table_name(ctx, COUNTER_SPACES[space][0])
    if table:
        return _reserve_from_counter(ctx, table, count, floor)
    if space == "txn" and ctx.connection.vendor == "postgresql":
        return _reserve_from_serial(ctx, count, floor)
    return floor  # metastores made by metastore_ddl (SQLite); Hive 4 on MySQL (AUTO_INCREMENT follows)


def _next_after_max(ctx: Context, sources: Source) -> int:
    highest = 0
    for model, field_name in sources:
        if model_available(model, ctx.version):
            ctx.cursor.execute(f"SELECT MAX({ctx.column(model, field_name)}) FROM {ctx.table(model)}")
            highest = max(highest, ctx.cursor.fetchone()[0] or 0)
    return highest + 1


def _for_update(ctx: Context) -> str:
    return " FOR UPDATE" if ctx.connection.features.has_select_for_update else ""


def _reserve_from_counter(ctx: Context, table: str, count: int, floor: int) -> int:
    """A block from one of Hive's single-row ACID counters (NEXT_TXN_ID, NEXT_LOCK_ID …)."""
    column = ctx.quote(ctx.connection.introspection.get_table_description(ctx.cursor, table)[0].name)
    quoted = ctx.quote(table)
    ctx.cursor.execute(f"SELECT {column} FROM {quoted}{_for_update(ctx)}")
    row = ctx.cursor.fetchone()
    start = max(row[0], floor) if row else floor
    if row is None:
        ctx.cursor.execute(f"INSERT INTO {quoted} ({column}) VALUES (%s)", [start + count])
    else:
        ctx.cursor.execute(f"UPDATE {quoted} SET {column} = %s", [start + count])
    return start


def _reserve_from_serial(ctx: Context, count: int, floor: int) -> int:
    """Hive 4 on PostgreSQL: TXNS.TXN_ID is a bigserial; move its sequence past the block."""
    ctx.cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [ctx.table(Transaction), "TXN_ID"])
    sequence = ctx.cursor.fetchone()[0]
    if not sequence:
        return floor
    ctx.cursor.execute("SELECT nextval(%s)", [sequence])
    start = max(ctx.cursor.fetchone()[0], floor)
    ctx.cursor.execute("SELECT setval(%s, %s)", [sequence, start + count - 1])
    return start


def _actual_table_name(ctx: Context, name: str) -> str:
    """The table's name as the database spells it (lower case in Hive 2.3/3.1 PostgreSQL scripts), or ''."""
    names = {n.lower(): n for n in ctx.connection.introspection.table_names(ctx.cursor)}
    return names.get(name.lower(), "")
