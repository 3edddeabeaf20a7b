"""
The data a relocate request copies, on its page and in the API: the basis, the duration's basis, the small-file
histogram as a table and as a chart drawn by ``static/js/charts.js`` from the request's JSON endpoint.
"""

from __future__ import annotations

import re
from pathlib import Path

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.services.change_requests import change_request_create
from tests.fixtures.factories import html
from tests.fixtures.operations import location_of


def relocate_request(metastore: Metastore, warehouse: Path, user: User, table: str = "sales.orders"):  # noqa: ANN201
    target = location_of(warehouse / "sales.db" / "orders_charted")
    clause = " PARTITION (dt='2024-01-02')" if table == "sales.orders" else ""
    spec = parse_alter(f"ALTER TABLE {table}{clause} SET LOCATION '{target}' WITH DATA")
    return change_request_create(user=user, metastore=metastore.name, spec=spec, reason="move the day")


def test_the_request_page_shows_the_data_scope_and_references_its_chart_endpoint(
    metastore: Metastore, warehouse: Path, people: dict[str, User], api: dict[str, APIClient]
) -> None:
    """The page states the basis and the duration's, lists the histogram and points charts.js at the JSON, which
    holds the same buckets."""
    # given
    change = relocate_request(metastore, warehouse, people["steward"])
    client = Client()
    client.force_login(people["viewer"])
    endpoint = reverse("operations_api:change-request-data-scope-charts", args=[change.pk])

    # when
    page = html(client.get(reverse("operations:detail", args=[change.pk])))
    charts = api["viewer"].get(endpoint)

    # then
    stored = change.preview["data_copy"]
    assert f'data-charts-url="{endpoint}"' in page
    assert 'data-chart="file_sizes"' in page and "js/charts.js" in page
    assert stored["scope"]["basis"] in page
    assert "no basis yet" in page
    assert 'id="data-scope-histogram"' in page
    assert charts.status_code == 200
    chart = charts.json()["file_sizes"]
    assert chart["labels"][:2] == ["< 1 MiB", "1–16 MiB"]
    assert sum(chart["series"]["files"]) == stored["files"] > 0


def test_the_request_page_and_api_name_the_copy_and_the_deletion_and_ask_two_approvals(
    metastore: Metastore, warehouse: Path, people: dict[str, User], api: dict[str, APIClient]
) -> None:
    """The preview card lists the data job's high criteria with their files and bytes, and two approvals; the API's
    request carries the same criteria and approvals."""
    # given
    change = relocate_request(metastore, warehouse, people["steward"])
    client = Client()
    client.force_login(people["viewer"])

    # when
    page = html(client.get(reverse("operations:detail", args=[change.pk])))
    body = api["viewer"].get(reverse("operations_api:change-request-detail", args=[change.pk])).json()

    # then
    files = f"{change.preview['data_copy']['files']:,} file(s)"
    assert 'data-criterion="data_copied"' in page and 'data-criterion="data_deleted"' in page
    assert page.count(files) >= 2
    assert [c["name"] for c in body["preview"]["criteria"] if c["level"] == "high"] == ["data_copied", "data_deleted"]
    assert body["required_approvals"] == 2


def test_a_request_without_data_work_has_no_data_scope_chart(
    metastore: Metastore, people: dict[str, User], api: dict[str, APIClient]
) -> None:
    """A metadata-only ALTER has no data scope: the endpoint answers not_found, naming the request."""
    # given
    spec = parse_alter("ALTER TABLE sales.orders SET TBLPROPERTIES ('owner_team'='x')")
    change = change_request_create(user=people["steward"], metastore=metastore.name, spec=spec)

    # when
    response = api["viewer"].get(reverse("operations_api:change-request-data-scope-charts", args=[change.pk]))

    # then
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert str(change.pk) in response.json()["message"]


def test_the_hive_card_of_a_relocation_claims_no_estimate_or_ratio(
    metastore: Metastore, warehouse: Path, people: dict[str, User]
) -> None:
    """Hive cannot move a table's data (SET LOCATION moves none): the card says so instead of comparing an estimate of
    metadata-only work with the console's copy."""
    # given
    change = relocate_request(metastore, warehouse, people["steward"])
    client = Client()
    client.force_login(people["viewer"])

    # when
    page = html(client.get(reverse("operations:detail", args=[change.pk])))

    # then
    card = re.search(r'<div class="stat" id="preview-hive-cost".*?</div>', page, re.DOTALL).group(0)
    assert 'data-comparable="false"' in card and "cannot do this" in card
    assert "× the console" not in page and "estimate</span>" not in card
    assert change.preview["hive"]["comparable"] is False


def test_the_estimate_card_of_a_spark_job_names_its_phases_not_one_transaction(
    metastore: Metastore, warehouse: Path, people: dict[str, User], settings
) -> None:  # noqa: ANN001
    """Issue 29: the card said "0.051 s, set-based, one transaction" for a Spark job. Now it is the Spark job's
    estimate, start-up + copy + swap from earlier jobs on the engine, and the data panel gives each phase's basis."""
    # given: two earlier relocations on the engine, their phases measured
    from datetime import timedelta

    from django.utils import timezone

    from operations.choices import JobState
    from operations.models import Job

    settings.CATALOG_SPARK_MASTER = "local[2]"
    end = timezone.now()
    for scale in (1, 2):
        Job.objects.create(
            kind="relocate", program="relocate", state=JobState.SUCCEEDED, spark_master="local[2]", attempts=1,
            bytes_done=10_000_000 * scale, partitions_total=10 * scale, started_at=end - timedelta(seconds=30 + scale),
            work_started_at=end - timedelta(seconds=10 + scale), committing_at=end - timedelta(seconds=scale),
            finished_at=end,
        )  # fmt: skip
    change = relocate_request(metastore, warehouse, people["steward"])
    client = Client()
    client.force_login(people["viewer"])

    # when
    page = html(client.get(reverse("operations:detail", args=[change.pk])))

    # then
    card = re.search(r'id="preview-console-estimate".*?</div>', page, re.DOTALL).group(0)
    assert "Console estimate (Spark job)" in card and "set-based, one transaction" not in card
    assert re.search(r"Spark start-up 20 s \+ copy [\d.]+ s \+ swap [\d.]+ s", card)
    phases = re.search(r'id="data-scope-phases">.*?</ul>', page, re.DOTALL).group(0)
    assert re.findall(r'data-phase="(\w+)"', phases) == ["startup", "work", "swap"]
    assert "median of 2 earlier start-up(s) on local[2]" in phases
