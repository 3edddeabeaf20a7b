"""The entry point: plan everything, reserve ids once per space, write the rows, then the bulk content."""

from __future__ import annotations

import random
import time
from pathlib import Path

from django.db import connections, transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import TableColumnStatistics
from catalog_admin.seeding.acid import plan_acid_state
from catalog_admin.seeding.big_table import plan_big_table
from catalog_admin.seeding.bulk import skip_foreign_key_checks
from catalog_admin.seeding.content import DEMO_DATABASES, DEMO_TABLES, SeedOptions, SeedReport
from catalog_admin.seeding.context import WRITE_ORDER, Context
from catalog_admin.seeding.databases import ensure_catalog, ensure_database, load_databases
from catalog_admin.seeding.demo import plan_demo_table
from catalog_admin.seeding.reserve import reserve_ids
from catalog_admin.seeding.rows import write_rows
from catalog_admin.seeding.scale import plan_scale_tables
from catalog_admin.selectors.metastores import Metastore

__all__ = ("seed_metastore",)


def seed_metastore(metastore: Metastore, options: SeedOptions) -> SeedReport:
    """Write the demo content (skipping what exists) and the requested scale content, in one transaction."""
    started = time.monotonic()
    connection = connections[metastore.alias]
    with allow_metastore_writes(), transaction.atomic(using=metastore.alias), connection.cursor() as cursor:
        ctx = Context(
            cursor, connection, metastore.schema, Path(options.warehouse).resolve(), random.Random(options.seed)
        )
        _plan_content(ctx, options)
        reserve_ids(ctx)
        counts = write_rows(ctx, WRITE_ORDER[: WRITE_ORDER.index(TableColumnStatistics)])
        if ctx.bulk:
            _note_foreign_keys(ctx, skip_foreign_key_checks(ctx))
        for step in ctx.bulk:
            counts.update(step(ctx))
        # Column statistics last: on a fresh metastore the bulk statistics then append to the stats indexes.
        counts.update(write_rows(ctx, WRITE_ORDER[WRITE_ORDER.index(TableColumnStatistics) :]))
    return SeedReport(dict(counts), ctx.files, tuple(ctx.skipped), tuple(ctx.notes), time.monotonic() - started)


def _note_foreign_keys(ctx: Context, skipped: bool) -> None:
    if skipped:
        ctx.notes.append("Foreign-key triggers were skipped for the bulk rows (session_replication_role=replica).")
    else:
        ctx.notes.append(
            "No permission to set session_replication_role: foreign keys were checked row by row (slower bulk insert)."
        )


def _plan_content(ctx: Context, options: SeedOptions) -> None:
    ensure_catalog(ctx)
    load_databases(ctx)
    for spec in DEMO_DATABASES:
        ensure_database(ctx, spec)
    created = [spec for spec in DEMO_TABLES if plan_demo_table(ctx, spec)]
    plan_acid_state(ctx, {(spec.database, spec.name) for spec in created if spec.acid})
    if options.tables:
        plan_scale_tables(ctx, options.tables)
    if options.big_table_partitions:
        plan_big_table(ctx, options.big_table_partitions, options.col_stats)
