"""The demo's table at scale: partitions on disk and off it, real Parquet files with their own statistics, anomalies."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from django.conf import settings

from catalog_admin.models import Table
from catalog_admin.seeding.demo_scale import DAYS_WITH_FILES, MISSING, OUTSIDE, add_demo_scale_table
from catalog_admin.selectors.metastores import Metastore, get_metastore
from catalog_admin.selectors.partition_anomalies import anomaly_counts, partition_row_total
from catalog_admin.selectors.partitions import table_partition_keys
from catalog_admin.selectors.samples import table_sample

pytestmark = [
    pytest.mark.slow,  # several seconds: hundreds of Parquet files
    pytest.mark.django_db(databases="__all__"),
    pytest.mark.parametrize("metastore_alias", ["hive31_pg", "hive_sqlite"], indirect=True),
]

PARTITIONS = 24 * (DAYS_WITH_FILES + 10)


def test_the_scale_table_has_its_anomalies_files_and_statistics(
    metastore: Metastore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: the test's warehouse is one of the metastore's governed roots, as the demo's configured warehouse is
    configs = [replace(c, extra_roots=(*c.extra_roots, str(tmp_path))) if c.name == metastore.name else c
               for c in settings.METASTORE_CONFIGS]  # fmt: skip
    monkeypatch.setattr(settings, "METASTORE_CONFIGS", configs)
    metastore = get_metastore(metastore.name)

    # when
    added = add_demo_scale_table(metastore, str(tmp_path), PARTITIONS)
    again = add_demo_scale_table(metastore, str(tmp_path), PARTITIONS)

    # then
    table = Table.objects.using(metastore.alias).select_related("sd").get(database__name="bench", name="events")
    counts = anomaly_counts(metastore, table)
    assert (added, again) == (PARTITIONS, 0)  # added once
    assert (counts.outside, counts.missing) == (OUTSIDE, MISSING)
    assert 0 < counts.stale < PARTITIONS // 50
    total = partition_row_total(metastore, table)
    assert total.complete and total.rows > 0
    sample = table_sample(metastore, table, table_partition_keys(metastore, table), limit=5)
    assert len(sample.rows) == 5
    assert sample.columns[-2:] == ["dt", "hour"]
    parquet = [p for p in tmp_path.rglob("000000_0") if p.read_bytes()[:4] == b"PAR1"]
    assert len(parquet) == DAYS_WITH_FILES * 24
