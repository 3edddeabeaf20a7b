"""
The ACID directories of a transactional table on the official 3.1.0 and 4.0.0 schemas: the valid write ids read from
TXNS / TXN_TO_WRITE_ID / NEXT_WRITE_ID, each partition directory's getAcidState on real directories under the test
warehouse, the Initiator's verdict, and the page and API that show them.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import TableParam, TransactionComponent
from catalog_admin.seeding.content import ABORTED_PARTITION, ACID_JOBS, OPEN_PARTITION
from catalog_admin.selectors.acid import partition_reports, valid_txn_list, valid_write_ids, worst_partitions
from tests.fixtures.acid_dirs import abort_write_id_4, hive_dir, on_disk
from tests.fixtures.factories import html, partition_locations, table_row

pytestmark = pytest.mark.django_db

BOTH = pytest.mark.parametrize(
    "metastore_alias", ["hive31_pg", pytest.param("hive40_pg", marks=pytest.mark.matrix)], indirect=True
)


@BOTH
def test_valid_write_ids_from_the_metastore(metastore):
    """Write ids 1-2 committed, 3 open (its transaction is open), 4 aborted: ``4:3:3:4``."""
    # given
    abort_write_id_4(metastore)
    txns = valid_txn_list(metastore)
    # when
    ids = valid_write_ids(metastore, *ACID_JOBS, txns)
    # then
    assert str(ids) == "4:3:3:4"
    open_txn = TransactionComponent.objects.using(metastore.alias).get(write_id=3).txn_id
    assert open_txn in txns.open and open_txn <= txns.high_watermark


@BOTH
def test_partition_directories_as_hive_reads_them(metastore, warehouse):
    """Per partition: the compacted base_2 makes delta_1/delta_2 obsolete; the open write's delta is not read; the
    aborted write's delta is aborted; on 4.x a base whose compactor transaction aborted is aborted too."""
    # given
    aborted_txn = abort_write_id_4(metastore)
    table = table_row(metastore, *ACID_JOBS)
    locations = partition_locations(metastore, table.id)
    open_dir, aborted_dir = on_disk(locations[OPEN_PARTITION]), on_disk(locations[ABORTED_PARTITION])
    hive_dir(open_dir, "base_0000002", size=1000, compacted=True)
    hive_dir(open_dir, "delta_0000003_0000003_0000")
    hive_dir(aborted_dir, "delta_0000004_0000004_0000")
    if metastore.schema.version.major >= 4:
        hive_dir(aborted_dir, f"base_0000002_v{aborted_txn:07d}")
    # when
    page = partition_reports(metastore, ACID_JOBS[0], table, size=100)
    reports = {r.partition: r for r in page.items}
    # then
    opened = reports[OPEN_PARTITION].state
    assert opened.base is not None and opened.base.name == "base_0000002"
    assert opened.deltas == () and "delta_0000003_0000003_0000" not in opened.obsolete
    assert set(opened.obsolete) == {"delta_0000001_0000001_0000", "delta_0000002_0000002_0000"}
    aborted = reports[ABORTED_PARTITION].state
    expected = {"delta_0000004_0000004_0000"}
    if metastore.schema.version.major >= 4:
        expected.add(f"base_0000002_v{aborted_txn:07d}")
    assert set(aborted.aborted) == expected
    assert [d.name for d in aborted.deltas] == ["delta_0000001_0000001_0000", "delta_0000002_0000002_0000"]


@BOTH
def test_needs_compaction_by_thresholds_and_the_worst_list(metastore, warehouse, settings):
    """With the delta-count threshold at 1 every two-delta partition needs a (major: no base) compaction; the one
    with a third (delete) delta leads the list; a table's ``compactorthreshold.*`` property overrides the setting."""
    # given
    settings.CATALOG_COMPACTION_THRESHOLDS = {"delta_num": 1}
    table = table_row(metastore, *ACID_JOBS)
    root = on_disk(partition_locations(metastore, table.id)[ABORTED_PARTITION])
    hive_dir(root, "delete_delta_0000002_0000002_0000", size=1)
    # when
    worst = worst_partitions(metastore)
    # then
    assert (worst[0].database, worst[0].table, worst[0].report.partition) == (*ACID_JOBS, ABORTED_PARTITION)
    assert worst[0].report.need.compaction_type == "major" and worst[0].report.need.deltas == 3
    assert worst[0].report.need.aborted_transactions == 1  # the seeded aborted transaction's component
    assert {(n.database, n.table) for n in worst} >= {ACID_JOBS}
    # when the scan may read one directory only (every seeded directory has two deltas: each needs compaction)
    settings.CATALOG_ACID_SCAN_LIMIT = 1
    # then exactly that one is judged
    assert len(worst_partitions(metastore)) == 1
    # when the table raises its own threshold
    settings.CATALOG_ACID_SCAN_LIMIT = 5000
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).create(
            table_id=table.id, key="compactorthreshold.hive.compactor.delta.num.threshold", value="5"
        )
    # then
    assert all((n.database, n.table) != ACID_JOBS for n in worst_partitions(metastore))


@BOTH
def test_page_and_api_show_the_directories(metastore, warehouse, client, people, api):
    """The table page links to the ACID directories page; the page and the API list base, deltas and the queue."""
    # given
    table = table_row(metastore, *ACID_JOBS)
    hive_dir(on_disk(partition_locations(metastore, table.id)[OPEN_PARTITION]), "base_0000002", compacted=True)
    client.force_login(people["viewer"])
    args = (metastore.name, *ACID_JOBS)
    # when
    table_page = html(client.get(reverse("catalog:table", args=args)))
    page = html(client.get(reverse("catalog:acid-directories", args=args)))
    response = api["viewer"].get(reverse("api:acid-directory-list", args=args), {"page_size": 2})
    # then
    assert reverse("catalog:acid-directories", args=args) in table_page
    assert 'id="acid-directories-summary"' in table_page and "base_0000002" in table_page
    assert "base_0000002" in page and 'id="write-ids">3:3:3:' in page
    body = response.json()
    assert response.status_code == 200 and len(body["results"]) == 2 and body["next_cursor"]
    assert body["write_ids"] == "3:3:3:"
    assert [c["type"] for c in body["compaction_queue"]] == ["a"]
    rest = api["viewer"].get(reverse("api:acid-directory-list", args=args), {"cursor": body["next_cursor"]}).json()
    seen = {r["partition"] for r in body["results"] + rest["results"]}
    assert seen == set(partition_locations(metastore, table.id))
    opened = next(r for r in body["results"] + rest["results"] if r["partition"] == OPEN_PARTITION)
    assert opened["state"]["base"]["name"] == "base_0000002" and opened["need"]["needed"] is False


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_compaction_needs_api_refuses_a_bad_limit(metastore, api):
    """``limit`` is 1-500: anything else is a 400 naming the parameter."""
    # when
    response = api["viewer"].get(reverse("api:compaction-needs", args=[metastore.name]), {"limit": "0"})
    # then
    assert response.status_code == 400
    assert "limit" in response.json()["message"]
