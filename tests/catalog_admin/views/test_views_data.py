"""
The table page's data: its sample (page panel and API, from the seeded Parquet and text files), SHOW CREATE TABLE with
its copy button, the partition charts API, the anomaly counts and filter, and the rows of a partitioned table.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Partition, PartitionParam, StorageDescriptor, TableParam
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.tables import get_table
from tests.fixtures.factories import html, make_user, token_client
from tests.fixtures.operations import location_of, path_of

pytestmark = pytest.mark.django_db(databases="__all__")

ORDERS = ("sales", "orders")  # parquet, partitioned (dt string, hour int), one partition missing on disk
CAMPAIGNS = ("marketing", "campaigns")  # text, field.delim ','
VIEW = ("marketing", "campaign_performance")


@pytest.fixture
def client() -> Client:
    client = Client()
    client.force_login(make_user("data-viewer", "viewer"))
    return client


@pytest.fixture
def api() -> APIClient:
    return token_client(make_user("data-api", "viewer"))


def api_url(name: str, metastore: Metastore, table: tuple[str, str]) -> str:
    return reverse(f"api:{name}", args=[metastore.name, *table])


def test_the_table_page_shows_show_create_table_with_a_copy_button_and_its_script(client, metastore) -> None:
    content = html(client.get(reverse("catalog:table", args=[metastore.name, *ORDERS])))

    assert 'id="show-create-statement">CREATE TABLE `sales.orders`(' in content
    assert "PARTITIONED BY ( \n  `dt` string, \n  `hour` int)" in content
    assert 'data-copy-target="#show-create-statement"' in content
    assert 'src="/static/js/copy.js"' in content
    assert "<script>" not in content  # no inline script (CSP)


def test_a_partitioned_table_shows_its_rows_as_the_sum_of_its_partitions(client, metastore) -> None:
    # given
    _db, table = get_table(metastore, *ORDERS)
    rows = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=table.id, key="numRows")
    total = sum(int(v) for v in rows.values_list("value", flat=True))

    # when
    content = html(client.get(reverse("catalog:table", args=[metastore.name, *ORDERS])))

    # then
    assert total > 0
    stat = content.split('id="partition-rows"')[1].split("</div>")[0]
    assert f">{total:,}</span>" in stat
    assert f"sum over {rows.count()} partitions" in stat


def test_a_partitioned_tables_files_and_size_are_its_partitions_not_its_own_zeros(client, metastore) -> None:
    """Hive leaves a partitioned table's own numFiles/totalSize at 0: the head shows the partitions' sums instead of
    "0 files, 0 B" next to millions of rows (issue 29)."""
    # given: the table's own parameters say 0, as Hive writes them
    _db, table = get_table(metastore, *ORDERS)
    params = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=table.id)
    files = sum(int(v) for v in params.filter(key="numFiles").values_list("value", flat=True))
    size = sum(int(v) for v in params.filter(key="totalSize").values_list("value", flat=True))
    with allow_metastore_writes():
        for key in ("numFiles", "totalSize"):
            TableParam.objects.using(metastore.alias).update_or_create(
                table_id=table.id, key=key, defaults={"value": "0"}
            )

    # when
    content = html(client.get(reverse("catalog:table", args=[metastore.name, *ORDERS])))

    # then
    assert files > 0 and size > 0
    shown_files = content.split('id="partition-files"')[1].split("</div>")[0]
    shown_size = content.split('id="partition-bytes"')[1].split("</div>")[0]
    assert f">{files:,}</span>" in shown_files and "numFiles" in shown_files
    assert f'title="{size:,} bytes"' in shown_size and ">0 B<" not in shown_size
    assert 'id="table-statistics-partitioned"' in content


def test_the_sample_panel_reads_the_text_files_with_the_serde_delimiter(client, metastore) -> None:
    response = client.get(reverse("catalog:table-sample", args=[metastore.name, *CAMPAIGNS]), {"limit": 3})

    content = html(response)
    assert response.status_code == 200
    assert content.count("<tr>") == 1 + 3  # the header and three rows
    assert '<th class="mono">campaign_id</th>' in content
    assert "3 rows (the first) from 1 file" in content


def test_the_sample_api_reads_a_partition_from_its_parquet_file(api, metastore) -> None:
    # when
    response = api.get(api_url("table-sample", metastore, ORDERS), {"limit": 2, "partition": "dt=2024-01-02/hour=3"})

    # then
    body = response.json()
    assert response.status_code == 200, body
    assert body["columns"] == ["id", "customer_id", "amount", "status", "dt", "hour"]
    assert len(body["rows"]) == 2
    assert all(row[-2:] == ["2024-01-02", "3"] for row in body["rows"])
    assert all(isinstance(row[0], int) and isinstance(row[2], str) for row in body["rows"])  # bigint, decimal


def test_the_sample_of_a_partition_missing_on_disk_is_no_data_files(api, metastore) -> None:
    response = api.get(api_url("table-sample", metastore, ORDERS), {"partition": "dt=2024-01-03/hour=9"})

    assert response.status_code == 404
    assert response.json()["code"] == "no_data_files"


@pytest.mark.parametrize(("params", "parameter"), [({"limit": "0"}, "limit"), ({"limit": "x"}, "limit")])
def test_a_bad_sample_limit_is_a_400_naming_it(api, metastore, params, parameter) -> None:
    response = api.get(api_url("table-sample", metastore, ORDERS), params)

    assert response.status_code == 400
    assert response.json()["details"] == {"parameter": parameter}


def test_a_view_has_no_files_to_sample(api, metastore) -> None:
    response = api.get(api_url("table-sample", metastore, VIEW))

    assert response.status_code == 422
    assert response.json()["code"] == "unreadable_data"


def test_the_show_create_api_matches_the_page(api, client, metastore) -> None:
    statement = api.get(api_url("table-show-create", metastore, VIEW)).json()["statement"]

    assert statement.startswith("CREATE VIEW `marketing.campaign_performance` AS SELECT")
    page = html(client.get(reverse("catalog:table", args=[metastore.name, *VIEW])))
    assert "CREATE VIEW `marketing.campaign_performance` AS SELECT" in page


def test_the_partition_charts_count_partitions_and_bytes_per_day_and_bucket_file_sizes(api, metastore) -> None:
    # given
    _db, table = get_table(metastore, *ORDERS)
    sizes = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=table.id, key="totalSize")
    total_bytes = sum(int(v) for v in sizes.values_list("value", flat=True))

    # when
    charts = api.get(api_url("partition-charts", metastore, ORDERS)).json()

    # then
    per_day = charts["partitions_per_day"]
    assert per_day["labels"] == ["2024-01-01", "2024-01-02", "2024-01-03"]
    assert per_day["series"] == {"partitions": [4, 4, 4]}
    assert sum(charts["bytes_per_key"]["series"]["bytes"]) == total_bytes
    histogram = charts["file_sizes"]
    assert histogram["labels"][0] == "< 1 MiB"
    assert histogram["series"]["partitions"][0] == 12  # small seeded files: every partition
    assert histogram["series"]["files"][0] == 12


def test_the_table_page_loads_the_anomaly_counts_and_charts(client, metastore) -> None:
    content = html(client.get(reverse("catalog:table", args=[metastore.name, *ORDERS])))

    assert f'hx-get="/m/{metastore.name}/db/sales/t/orders/partitions/anomalies/"' in content
    assert (
        f'data-charts-url="/api/metastores/{metastore.name}/databases/sales/tables/orders/partition-charts/"' in content
    )
    assert 'src="/static/js/charts.js"' in content


def test_the_anomaly_counts_link_to_the_filtered_partitions(client, metastore) -> None:
    # when
    counts = html(client.get(reverse("catalog:partition-anomalies", args=[metastore.name, *ORDERS])))
    missing = html(client.get(reverse("catalog:partitions", args=[metastore.name, *ORDERS]), {"anomaly": "missing"}))

    # then
    assert ">2 outside the table root</a>" in counts
    assert ">1 missing on disk</a>" in counts
    assert "?anomaly=missing" in counts
    assert missing.count("/p/dt=2024-01-03/hour=9/") == 1
    assert "/p/dt=2024-01-01/hour=0/" not in missing


def test_a_partition_missing_on_disk_does_not_show_its_statistics_as_fresh(client, metastore) -> None:
    """The metastore marks the partition's statistics accurate, but its directory is gone: the page and the list say
    the statistics are not true of the disk instead of "stats fresh" (issue 29)."""
    # given: sales.orders' partition whose directory is missing, its basic statistics marked accurate in the metastore
    _db, table = get_table(metastore, *ORDERS)
    missing = "dt=2024-01-03/hour=9"
    partition = Partition.objects.using(metastore.alias).get(table_id=table.id, name=missing)
    with allow_metastore_writes():
        PartitionParam.objects.using(metastore.alias).update_or_create(
            partition_id=partition.id, key="COLUMN_STATS_ACCURATE", defaults={"value": '{"BASIC_STATS":"true"}'}
        )

    # when
    page = html(client.get(reverse("catalog:partition", args=[metastore.name, *ORDERS, missing])))
    listed = html(client.get(reverse("catalog:partitions", args=[metastore.name, *ORDERS]), {"anomaly": "missing"}))

    # then
    head = page.split('<p class="meta">')[1].split("</p>")[0]
    assert "stats fresh" not in head and 'id="stats-contradicted"' in head
    assert 'id="stats-from-metastore"' in page
    row = listed.split("/p/dt=2024-01-03/hour=9/")[1].split("</tr>")[0]
    assert 'badge ok">fresh<' not in row and ">not on disk<" in row


def test_the_file_size_histogram_counts_partitions_without_files_apart(api, metastore) -> None:
    """A partition the metastore records with numFiles 0 is "no files", not "no statistics" nor a size bucket."""
    # given: one partition of sales.orders emptied in the metastore (numFiles 0, totalSize 0)
    _db, table = get_table(metastore, *ORDERS)
    with allow_metastore_writes():
        emptied = PartitionParam.objects.using(metastore.alias).filter(
            partition__table_id=table.id, partition__name="dt=2024-01-01/hour=0", key__in=("numFiles", "totalSize")
        )
        assert emptied.update(value="0") == 2

    # when
    histogram = api.get(api_url("partition-charts", metastore, ORDERS)).json()["file_sizes"]

    # then
    counts = dict(zip(histogram["labels"], histogram["series"]["partitions"], strict=True))
    assert counts["no files"] == 1 and counts["< 1 MiB"] == 11
    assert "no statistics" not in counts
    assert "numFiles and totalSize" in histogram["title"]


def test_more_days_than_the_chart_holds_are_charted_per_month_not_as_the_last_days(api, metastore, monkeypatch) -> None:
    """Beyond MAX_GROUPS days the partitions are counted per month, every partition in a bar (issue 29)."""
    from catalog_admin.selectors import partition_charts

    # given: room for 2 bars; sales.orders has 3 days of January 2024, 4 partitions each
    monkeypatch.setattr(partition_charts, "MAX_GROUPS", 2)

    # when
    charts = api.get(api_url("partition-charts", metastore, ORDERS)).json()

    # then
    per_month = charts["partitions_per_day"]
    assert (per_month["labels"], per_month["series"], per_month["truncated"]) == (
        ["2024-01"],
        {"partitions": [12]},
        False,
    )
    assert per_month["title"] == "Partitions per month of dt"
    assert charts["bytes_per_key"]["labels"] == ["2024-01"]


def test_the_charts_of_a_table_beyond_the_limit_read_its_newest_partitions(api, metastore, monkeypatch) -> None:
    from catalog_admin.selectors import partition_charts

    # given: a limit of 5 partitions (sales.orders has 12: 4 per day over 3 days)
    monkeypatch.setattr(partition_charts, "MAX_PARTITIONS", 5)

    # when
    charts = api.get(api_url("partition-charts", metastore, ORDERS)).json()

    # then: the newest five by name: dt=2024-01-03 (4) and the last of dt=2024-01-02
    assert charts["partitions_per_day"]["labels"] == ["2024-01-02", "2024-01-03"]
    assert charts["partitions_per_day"]["series"]["partitions"] == [1, 4]
    assert charts["partitions_per_day"]["truncated"] is True
    assert sum(charts["file_sizes"]["series"]["partitions"]) == 5


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside every governed root that no viewer may read (the console's SECRET_KEY, /etc/passwd)."""
    path = tmp_path / "private" / "secret_key"
    path.parent.mkdir()
    path.write_text("do-not-leak,x,y\n")
    return path


@pytest.mark.parametrize("link", ["file", "directory"])
def test_a_viewer_sample_through_a_link_is_refused_naming_it_and_shows_nothing(
    api, client, metastore, warehouse, secret, link
) -> None:
    """Issue 25, case 4: a link in a table's directory (to a file, or a linked subdirectory) is never followed: the
    API and the panel refuse with symlink_refused naming the link; no byte of its target is shown."""
    # given
    _db, table = get_table(metastore, *CAMPAIGNS)
    directory = path_of(table.sd.location)
    name = "zz_leak" if link == "file" else "zz_dir"
    (directory / name).symlink_to(secret if link == "file" else secret.parent)

    # when
    response = api.get(api_url("table-sample", metastore, CAMPAIGNS), {"limit": 500})
    panel = client.get(reverse("catalog:table-sample", args=[metastore.name, *CAMPAIGNS]), {"limit": 500})

    # then
    body = response.json()
    assert response.status_code == 422, body
    assert body["code"] == "symlink_refused"
    assert f"{table.sd.location}/{name}" in body["message"]
    assert panel.status_code == 422
    assert "do-not-leak" not in response.content.decode() + panel.content.decode()


def test_a_viewer_sample_of_a_table_outside_the_governed_roots_is_refused(api, client, metastore, secret) -> None:
    """Issue 25, case 4: a table whose location is outside the governed roots (a Hive client pointed it at /etc) is
    not read: outside_roots names the location; nothing of it is shown."""
    # given
    _db, table = get_table(metastore, *CAMPAIGNS)
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=table.sd_id).update(
            location=location_of(secret.parent)
        )

    # when
    response = api.get(api_url("table-sample", metastore, CAMPAIGNS))
    panel = client.get(reverse("catalog:table-sample", args=[metastore.name, *CAMPAIGNS]))

    # then
    body = response.json()
    assert response.status_code == 422, body
    assert body["code"] == "outside_roots"
    assert location_of(secret.parent) in body["message"]
    assert panel.status_code == 422
    assert "do-not-leak" not in response.content.decode() + panel.content.decode()
