"""
The ACID delta counts chart of ``ops.job_runs_acid`` on the official 3.1.0 and 4.0.0 schemas, from real directories
laid out as Hive writes them: the API's stacked series per partition (deltas and delete deltas after the base,
obsolete and aborted directories), the Initiator's threshold (the setting, or the table's own property), the bound on
the partitions charted, and the pages that hold the chart's container.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import TableParam
from catalog_admin.seeding.content import ABORTED_PARTITION, ACID_JOBS, OPEN_PARTITION
from catalog_admin.selectors import acid_charts
from tests.fixtures.acid_dirs import abort_write_id_4, hive_dir, on_disk
from tests.fixtures.factories import html, partition_locations, table_row

pytestmark = pytest.mark.django_db

BOTH = pytest.mark.parametrize(
    "metastore_alias", ["hive31_pg", pytest.param("hive40_pg", marks=pytest.mark.matrix)], indirect=True
)
THRESHOLD_PROPERTY = "compactorthreshold.hive.compactor.delta.num.threshold"


def charts_url(metastore) -> str:
    return reverse("api:acid-delta-charts", args=[metastore.name, *ACID_JOBS])


@BOTH
def test_the_chart_counts_each_partitions_directories_as_hive_reads_them(metastore, warehouse, api, settings):
    """Every seeded partition has delta_1 and delta_2; the compacted base_2 makes them obsolete in one partition;
    another gains a delete delta and an aborted delta; the threshold line is the Initiator's delta count."""
    # given
    settings.CATALOG_COMPACTION_THRESHOLDS = {"delta_num": 3}
    abort_write_id_4(metastore)
    table = table_row(metastore, *ACID_JOBS)
    locations = partition_locations(metastore, table.id)
    hive_dir(on_disk(locations[OPEN_PARTITION]), "base_0000002", size=1000, compacted=True)
    aborted_dir = on_disk(locations[ABORTED_PARTITION])
    hive_dir(aborted_dir, "delete_delta_0000002_0000002_0000", size=1)
    hive_dir(aborted_dir, "delta_0000004_0000004_0000")
    # when
    response = api["viewer"].get(charts_url(metastore))
    # then
    assert response.status_code == 200
    body = response.json()
    deltas, cleanup = body["delta_counts"], body["obsolete_aborted"]
    labels = sorted(locations)
    assert deltas["labels"] == labels and cleanup["labels"] == labels
    assert (body["charted"], body["truncated"], body["unlisted"]) == (len(labels), False, 0)
    by_partition = {
        name: (d, dd, o, a)
        for name, d, dd, o, a in zip(
            labels,
            deltas["series"]["deltas"],
            deltas["series"]["delete deltas"],
            cleanup["series"]["obsolete"],
            cleanup["series"]["aborted"],
            strict=True,
        )
    }
    assert by_partition[OPEN_PARTITION] == (0, 0, 2, 0)
    assert by_partition[ABORTED_PARTITION] == (2, 1, 0, 1)
    untouched = set(labels) - {OPEN_PARTITION, ABORTED_PARTITION}
    assert untouched and all(by_partition[name] == (2, 0, 0, 0) for name in untouched)
    assert deltas["stacked"] is True and deltas["threshold"] == {"value": 3, "label": "compaction above 3"}
    assert cleanup["threshold"] is None


@BOTH
def test_a_tables_own_threshold_wins(metastore, api, settings):
    """``compactorthreshold.hive.compactor.delta.num.threshold`` on the table moves the line."""
    # given
    settings.CATALOG_COMPACTION_THRESHOLDS = {"delta_num": 3}
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).create(
            table_id=table_row(metastore, *ACID_JOBS).id, key=THRESHOLD_PROPERTY, value="7"
        )
    # when
    body = api["viewer"].get(charts_url(metastore)).json()
    # then
    assert body["delta_counts"]["threshold"]["value"] == 7


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_the_chart_is_bounded_to_the_first_partitions_by_name(metastore, api, monkeypatch):
    """Beyond ``MAX_CHARTED`` partitions only the first by name are drawn, and the chart says which."""
    # given
    monkeypatch.setattr(acid_charts, "MAX_CHARTED", 2)
    names = sorted(partition_locations(metastore, table_row(metastore, *ACID_JOBS).id))
    # when
    body = api["viewer"].get(charts_url(metastore)).json()
    # then
    assert body["truncated"] is True and body["charted"] == 2
    assert body["delta_counts"]["labels"] == names[:2]
    assert body["delta_counts"]["subset"] == "the first 2 partitions by name"


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_the_acid_page_and_the_table_page_hold_the_chart(metastore, client, people):
    """Both pages of a transactional table hold the chart's container with the endpoint's URL and load charts.js (no
    inline script); a table that is not transactional has no such chart."""
    # given
    client.force_login(people["viewer"])
    args = (metastore.name, *ACID_JOBS)
    container = f'data-charts-url="{charts_url(metastore)}"'
    # when
    acid_page = html(client.get(reverse("catalog:acid-directories", args=args)))
    table_page = html(client.get(reverse("catalog:table", args=args)))
    plain_page = html(client.get(reverse("catalog:table", args=[metastore.name, "sales", "orders"])))
    # then
    for page in (acid_page, table_page):
        assert container in page
        assert 'data-chart="delta_counts"' in page and 'data-chart="obsolete_aborted"' in page
        assert 'src="/static/js/charts.js"' in page and "<script>" not in page
    assert "acid-delta-charts" not in plain_page
