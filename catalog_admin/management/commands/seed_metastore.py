"""``manage.py seed_metastore``: fill a registered metastore with demo content and optional scale content."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog_admin.errors import ApplicationError
from catalog_admin.seeding import BENCH_DATABASE, SCALE_DATABASES, SeedOptions, SeedReport, seed_metastore
from catalog_admin.selectors.metastores import Metastore, get_metastore

__all__ = ("Command", "default_warehouse")

HELP = f"""
Fill a registered metastore (SQLite, PostgreSQL or MariaDB/MySQL; Hive schema 2.3, 3.1 or 4.0) with
realistic content: databases default, sales, marketing and ops with managed, external, view and
ACID tables, partitions with stats, privileges, open transactions, locks and compactions, and
real data files under the warehouse directory. Only columns the schema version has are written,
and every id is allocated from Hive's SEQUENCE_TABLE and ACID counters.

Running it again is safe: demo databases and tables that already exist are skipped (nothing is
changed in them). --tables N always adds N new tables named t_<TBL_ID> over the databases
{", ".join(SCALE_DATABASES)}; --big-table-partitions P adds {BENCH_DATABASE}.events (or events_2,
events_3 ... when it exists) with P partitions and --col-stats C column statistics per partition.
Scale content has no data files on disk. On PostgreSQL it is written set-based (INSERT ... SELECT
FROM generate_series), skipping the per-row foreign-key triggers when the user may set
session_replication_role (superuser); elsewhere in batches. Everything runs in one transaction.
"""


def default_warehouse(metastore: Metastore) -> str:
    """The metastore's configured warehouse root, else ``<VAR_DIR>/warehouses/<name>``."""
    local = metastore.config.warehouse_path  # a file: URI is a path here, not <cwd>/file:/…
    return str(local) if local else str(Path(settings.VAR_DIR) / "warehouses" / metastore.name)


class Command(BaseCommand):
    help = HELP.strip()

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--metastore", help="registered metastore name (default: the default metastore)")
        parser.add_argument("--tables", type=_count, default=0, help="add N small tables (scale test)")
        parser.add_argument("--big-table-partitions", type=_count, default=0, help="add bench.events with P partitions")
        parser.add_argument(
            "--col-stats", type=_count, default=0, help="column statistics rows per big-table partition"
        )
        parser.add_argument("--warehouse", help="warehouse directory for locations and data files")
        parser.add_argument("--seed", type=int, default=42, help="random seed for the generated data (default 42)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["col_stats"] and not options["big_table_partitions"]:
            raise CommandError("--col-stats needs --big-table-partitions.")
        try:
            metastore = get_metastore(options["metastore"])
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        seed_options = SeedOptions(
            warehouse=options["warehouse"] or default_warehouse(metastore),
            tables=options["tables"],
            big_table_partitions=options["big_table_partitions"],
            col_stats=options["col_stats"],
            seed=options["seed"],
        )
        self.stdout.write(f"Seeding metastore '{metastore.name}' (Hive {metastore.schema.raw_version}) …")
        self.write_report(seed_metastore(metastore, seed_options), seed_options.warehouse)

    def write_report(self, report: SeedReport, warehouse: str) -> None:
        for table, count in sorted(report.counts.items()):
            self.stdout.write(f"  {table:<28} {count:>12,}")
        self.stdout.write(f"  {'total rows':<28} {sum(report.counts.values()):>12,}")
        if report.skipped:
            self.stdout.write(f"Skipped existing demo tables: {', '.join(report.skipped)}")
        for note in report.notes:
            self.stdout.write(note)
        self.stdout.write(f"Wrote {report.files} data files under {warehouse}")
        self.stdout.write(self.style.SUCCESS(f"Done in {report.elapsed:.1f} s."))


def _count(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError(value)
    return number
