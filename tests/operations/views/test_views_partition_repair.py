"""
``MSCK REPAIR TABLE`` offered where a steward meets the problem: on a partitioned table's page, on the "missing on
disk" list of its partitions (a guided request, for those who may request changes), and as a structured operation of
the API, which runs the whole flow: preview, approvals, execution and revert.
"""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from catalog_admin.models import Partition
from catalog_admin.selectors.metastores import Metastore
from tests.fixtures.factories import html, table_row

pytestmark = pytest.mark.usefixtures("eager_jobs")

MISSING = "dt=2024-01-03/hour=9"  # seeded without a directory


def signed_in(user) -> Client:  # noqa: ANN001 - a Django user
    client = Client()
    client.force_login(user)
    return client


def test_the_missing_on_disk_list_and_the_table_page_offer_the_repair(metastore: Metastore, people: dict) -> None:
    """A steward sees "Repair partitions" on the missing-on-disk list and the table page; a viewer does not; the
    link opens the guided request with the MSCK statement."""
    # given
    steward, viewer = signed_in(people["steward"]), signed_in(people["viewer"])
    partitions = reverse("catalog:partitions", args=[metastore.name, "sales", "orders"])
    table = reverse("catalog:table", args=[metastore.name, "sales", "orders"])

    # when
    missing = html(steward.get(partitions, {"anomaly": "missing"}))
    every = html(steward.get(partitions))
    page = html(steward.get(table))
    unpartitioned = html(steward.get(reverse("catalog:table", args=[metastore.name, "sales", "customers"])))
    guided = html(
        steward.get(
            reverse("operations:new"),
            {"metastore": metastore.name, "table": "sales.orders", "operation": "msck_repair"},
        )
    )

    # then
    assert 'id="request-msck-repair"' in missing and "operation=msck_repair" in missing
    assert 'id="request-msck-repair"' not in every
    assert 'id="request-msck-repair"' not in html(viewer.get(partitions, {"anomaly": "missing"}))
    assert 'id="request-repair"' in page and 'id="request-repair"' not in unpartitioned
    statement = re.search(r'<textarea name="statement"[^>]*>(.*?)</textarea>', guided, re.DOTALL).group(1)
    sync = " SYNC PARTITIONS" if metastore.schema.capabilities.msck_drops_partitions else ""  # 2.3 only adds
    assert unescape(statement).strip() == f"MSCK REPAIR TABLE `sales`.`orders`{sync}"


def test_the_missing_on_disk_list_offers_dropping_only_the_missing_partitions(metastore: Metastore, people) -> None:
    """Where Hive has MSCK … DROP (3.0+), the missing-on-disk list offers dropping only the missing partitions: the
    guided request's preview drops exactly the one without a directory and adds nothing (issue 29)."""
    # given
    steward = signed_in(people["steward"])
    partitions = reverse("catalog:partitions", args=[metastore.name, "sales", "orders"])

    # when
    missing = html(steward.get(partitions, {"anomaly": "missing"}))

    # then
    if not metastore.schema.capabilities.msck_drops_partitions:  # Hive 2.3 only adds
        assert 'id="request-drop-missing"' not in missing
        return
    link = unescape(re.search(r'href="([^"]+)" id="request-drop-missing"', missing).group(1))
    form = html(steward.get(link))
    statement = unescape(re.search(r'<textarea name="statement"[^>]*>(.*?)</textarea>', form, re.DOTALL).group(1))
    assert statement.strip() == "MSCK REPAIR TABLE `sales`.`orders` DROP PARTITIONS"
    preview = html(
        steward.post(
            reverse("operations:preview"),
            {"metastore": metastore.name, "statement": statement.strip()},
            HTTP_HX_REQUEST="true",
        )
    )
    assert re.findall(r'data-partition="([^"]+)"', preview) == [MISSING]
    assert 'id="request-drop-missing"' not in html(steward.get(partitions))


def _post(client: APIClient, name: str, pk: int | None = None, body: dict | None = None, status: int = 200) -> dict:
    path = reverse(f"operations_api:{name}", kwargs={"pk": pk} if pk is not None else {})
    response = client.post(path, body or {}, format="json")
    assert response.status_code == status, response.content
    return response.json()


def _run(api: dict[str, APIClient], pk: int, capture) -> dict:  # noqa: ANN001 - pytest-django's fixture
    """Submit, approve until approved, execute as a job (run at commit): the request after."""
    _post(api["steward"], "change-request-submit", pk)
    for approver in ("approver", "approver2"):
        if _post(api[approver], "change-request-approve", pk)["state"] == "approved":
            break
    with capture(execute=True):
        _post(api["steward"], "change-request-execute", pk, status=202)
    return api["viewer"].get(reverse("operations_api:change-request-detail", kwargs={"pk": pk})).json()


def _names(metastore: Metastore) -> set[str]:
    rows = Partition.objects.using(metastore.alias).filter(table__name="orders", table__database__name="sales")
    return set(rows.values_list("name", flat=True))


def test_msck_repair_as_an_api_operation_runs_the_whole_flow(
    metastore: Metastore,
    api: dict[str, APIClient],
    warehouse,
    django_capture_on_commit_callbacks,  # noqa: ANN001
) -> None:
    """The structured ``msck_repair`` operation previews the drop of the partition missing on disk (no data moves),
    is approved, executed by its job and reverted by a revert request: the partition comes back."""
    # given
    operation = {"kind": "msck_repair", "target": {"database": "sales", "table": "orders"}, "mode": "sync"}
    body = {"operation": operation, "metastore": metastore.name, "reason": "repair after the cleanup"}
    before = _names(metastore)
    if not metastore.schema.capabilities.msck_drops_partitions:  # Hive 2.3's MSCK only adds: a blocked draft
        draft = _post(api["steward"], "change-request-list", body=body, status=201)
        refused = _post(api["steward"], "change-request-submit", draft["id"], status=422)
        assert refused["code"] == "hive_rule_violation" and "msck_mode_unsupported" in json.dumps(refused)
        assert _names(metastore) == before
        return

    # when
    created = _post(api["steward"], "change-request-list", body=body, status=201)
    done = _run(api, created["id"], django_capture_on_commit_callbacks)
    after = _names(metastore)
    revert = _post(api["steward"], "change-request-revert", created["id"], {"reason": "undo"}, status=201)
    reverted = _run(api, revert["id"], django_capture_on_commit_callbacks)

    # then
    assert created["statement"] == "MSCK REPAIR TABLE `sales`.`orders` SYNC PARTITIONS"
    assert created["preview"]["affected"]["listed"][0]["name"] == MISSING
    assert {"table": "PARTITIONS", "inserted": 0, "updated": 0, "deleted": 1} in created["preview"]["row_changes"]
    assert created["preview"]["moves"] == []
    assert (done["state"], reverted["state"]) == ("succeeded", "succeeded")
    assert after == before - {MISSING}
    assert _names(metastore) == before


def test_the_outside_the_root_list_offers_moving_those_partitions_in(metastore: Metastore, people) -> None:
    """Issue 29, "re-point the outside": the list of partitions outside the table's root offers one request that
    moves them in (a relocation to the table's own root); its preview copies exactly those partitions."""
    # given
    steward, viewer = signed_in(people["steward"]), signed_in(people["viewer"])
    partitions = reverse("catalog:partitions", args=[metastore.name, "sales", "orders"])

    # when
    outside = html(steward.get(partitions, {"anomaly": "outside"}))
    link = unescape(re.search(r'href="([^"]+)" id="request-move-in"', outside).group(1))
    form = html(steward.get(link))
    statement = unescape(re.search(r'<textarea name="statement"[^>]*>(.*?)</textarea>', form, re.DOTALL).group(1))
    preview = html(
        steward.post(
            reverse("operations:preview"),
            {"metastore": metastore.name, "statement": statement.strip()},
            HTTP_HX_REQUEST="true",
        )
    )

    # then
    root = table_row(metastore, "sales", "orders").sd.location
    assert statement.strip() == f"ALTER TABLE `sales`.`orders` SET LOCATION '{root}' WITH DATA"
    assert "archive/sales/orders" in outside and "nothing else moves" in preview
    assert 'id="request-move-in"' not in html(steward.get(partitions, {"anomaly": "missing"}))
    assert 'id="request-move-in"' not in html(viewer.get(partitions, {"anomaly": "outside"}))
