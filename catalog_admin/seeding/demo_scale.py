"""
The demo's table at scale: ``bench.events`` with tens of thousands of hourly partitions, so that paging, the
anomaly counts and the charts mean something in ``bin/demo``.

Added once (skipped when ``bench.events`` exists) after the demo content, with the scale seeder
(:func:`catalog_admin.seeding.seed_metastore`, ``big_table_partitions``), then made realistic set-based:

* every partition directory exists on disk, except :data:`MISSING` of them, spread over the table;
* the last :data:`DAYS_WITH_FILES` days hold real Parquet files whose statistics (``numRows``, ``totalSize``) are
  the files' own; a few hours of each of those days hold many small files (the small-file histogram);
* :data:`OUTSIDE` partitions live in an archive directory outside the table's root;
* Hive's ``COLUMN_STATS_ACCURATE`` marks basic statistics accurate, except on one partition in :data:`STALE_EVERY`.
"""

from __future__ import annotations

import random
from pathlib import Path
from urllib.parse import urlsplit

from django.db import transaction
from django.db.models import Value
from django.db.models.functions import Replace

from catalog_admin.db import allow_metastore_writes
from catalog_admin.hive.locations import normalize_location
from catalog_admin.models import Partition, PartitionParam, StorageDescriptor, Table
from catalog_admin.seeding.content import BENCH_COLUMNS, SeedOptions
from catalog_admin.seeding.context import BENCH_DATABASE, BENCH_TABLE
from catalog_admin.seeding.files import encode_rows, generate_rows
from catalog_admin.seeding.runner import seed_metastore
from catalog_admin.selectors.metastores import Metastore

__all__ = ("DEMO_SCALE_PARTITIONS", "add_demo_scale_table")

DEMO_SCALE_PARTITIONS = 30_000  # about 3.4 years of hourly partitions
DAYS_WITH_FILES = 14
SMALL_FILES_HOURS = (0, 6, 12, 18)  # of each day with files: 40 small files instead of one
MISSING, OUTSIDE, STALE_EVERY = 12, 7, 97
_ACCURATE = '{"BASIC_STATS":"true"}'


def add_demo_scale_table(metastore: Metastore, warehouse: str, partitions: int = DEMO_SCALE_PARTITIONS) -> int:
    """Add ``bench.events`` with ``partitions`` partitions and its files; 0 when it exists already."""
    alias = metastore.alias
    if Table.objects.using(alias).filter(database__name=BENCH_DATABASE, name=BENCH_TABLE).exists():
        return 0
    seed_metastore(metastore, SeedOptions(warehouse=warehouse, big_table_partitions=partitions))
    table = Table.objects.using(alias).select_related("sd").get(database__name=BENCH_DATABASE, name=BENCH_TABLE)
    with allow_metastore_writes(), transaction.atomic(using=alias):
        _relocate_some(alias, table)
        _mark_statistics(alias, table)
        _write_files(alias, table)
    return partitions


def _ids(alias: str, table: Table) -> list[int]:
    return list(Partition.objects.using(alias).filter(table_id=table.id).order_by("id").values_list("id", flat=True))


def _relocate_some(alias: str, table: Table) -> None:
    """OUTSIDE partitions move (in the metastore) under ``<db>/archive_<table>/``: outside the table's root."""
    root = (table.sd.location or "").rstrip("/")
    archive = root.rsplit("/", 1)[0] + "/archive_" + table.name
    ids = _ids(alias, table)
    every = max(len(ids) // OUTSIDE, 1)
    chosen = ids[every // 2 :: every][:OUTSIDE]
    sds = Partition.objects.using(alias).filter(id__in=chosen).values_list("sd_id", flat=True)
    StorageDescriptor.objects.using(alias).filter(id__in=list(sds)).update(
        location=Replace("location", Value(root + "/"), Value(archive + "/"))
    )


def _mark_statistics(alias: str, table: Table) -> None:
    """Basic statistics accurate on every partition but one in STALE_EVERY (one bulk insert)."""
    ids = _ids(alias, table)
    PartitionParam.objects.using(alias).bulk_create(
        [
            PartitionParam(partition_id=part, key="COLUMN_STATS_ACCURATE", value=_ACCURATE)
            for index, part in enumerate(ids)
            if index % STALE_EVERY != STALE_EVERY // 2
        ],
        batch_size=5_000,
    )


def _local(location: str) -> Path:
    return Path(urlsplit(normalize_location(location)).path)


def _write_files(alias: str, table: Table) -> None:
    """Directories for every partition but MISSING of them (never among the last days); Parquet for the last days."""
    rows = list(
        Partition.objects.using(alias)
        .filter(table_id=table.id)
        .order_by("id")
        .values_list("id", "name", "sd__location")
    )
    with_files = rows[-DAYS_WITH_FILES * 24 :]
    every = max((len(rows) - len(with_files)) // MISSING, 1)
    missing = {row[0] for row in rows[: len(rows) - len(with_files)][every // 2 :: every][:MISSING]}
    for part, _name, location in rows:
        if part not in missing:
            _local(location).mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    for part, name, location in with_files:
        hour = int(name.rsplit("=", 1)[1])
        files = 40 if hour in SMALL_FILES_HOURS else 1
        count = rng.randint(800, 1_200)
        data = generate_rows(rng, BENCH_COLUMNS, count, (name.split("/")[0][3:], hour))
        size = 0
        for number in range(files):
            content = encode_rows("parquet", BENCH_COLUMNS, data[number::files])
            (_local(location) / f"{number:06d}_0").write_bytes(content)
            size += len(content)
        for key, value in (("numFiles", files), ("numRows", count), ("totalSize", size)):
            PartitionParam.objects.using(alias).filter(partition_id=part, key=key).update(value=str(value))
