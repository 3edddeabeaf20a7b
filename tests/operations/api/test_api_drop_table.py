"""DROP TABLE through the API: the structured operation (``kind: drop_table``) gives the same request as its
statement; the guided request offers it on a table's page."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from catalog_admin.selectors.metastores import Metastore
from operations.guided import guided_operations

pytestmark = pytest.mark.usefixtures("eager_jobs")


def create(client: APIClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(reverse("operations_api:change-request-list"), body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_the_structured_drop_gives_the_same_request_as_its_statement(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    # given
    operation = {"kind": "drop_table", "target": {"database": "sales", "table": "orders"}, "purge": True}

    # when
    structured = create(api["steward"], {"operation": operation, "metastore": metastore.name})
    typed = create(api["steward2"], {"statement": "DROP TABLE sales.orders PURGE", "metastore": metastore.name})

    # then
    assert structured["statement"] == typed["statement"] == "DROP TABLE `sales`.`orders` PURGE"
    assert structured["operation"] == typed["operation"] == {**operation, "if_exists": False}
    assert structured["fingerprint"] == typed["fingerprint"]
    assert structured["risk"] == "high"
    assert "table_dropped" in {c["name"] for c in structured["preview"]["criteria"]}


@pytest.mark.parametrize(
    ("table", "statement"),
    [("sales.orders", "DROP TABLE `sales`.`orders`"),
     ("marketing.campaign_performance", "DROP VIEW `marketing`.`campaign_performance`")],
)  # fmt: skip
def test_the_guided_request_offers_the_drop(metastore: Metastore, table: str, statement: str) -> None:
    drop = {op.key: op for op in guided_operations(metastore, table)}["drop"]

    assert drop.statement == statement


def test_a_sampled_table_directory_size_is_said_on_the_page_and_in_the_api(
    metastore: Metastore, api: dict[str, APIClient], people: dict, settings
) -> None:
    """Beyond CATALOG_DROP_SAMPLE_PARTITIONS the preview's size is an estimate: the page says "about" with a
    "sampled c of f" check beside the move, the API gives each move's ``sampled: [counted, found]``."""
    # given
    settings.CATALOG_DROP_SAMPLE_PARTITIONS = 2
    client = Client()
    client.force_login(people["steward"])

    # when
    page = client.post(
        reverse("operations:preview"),
        {"metastore": metastore.name, "statement": "DROP TABLE sales.orders"},
        HTTP_HX_REQUEST="true",
    )
    request = create(api["steward"], {"statement": "DROP TABLE sales.orders", "metastore": metastore.name})

    # then
    table_move = request["preview"]["moves"][0]
    counted, found = table_move["sampled"]
    assert 1 <= counted <= 2 < found
    assert all(move["sampled"] is None for move in request["preview"]["moves"][1:])  # outside the root: in full
    html = page.content.decode()
    assert page.status_code == 200
    assert f">sampled {counted} of {found}</span>" in html
    assert f'<td class="num">about {table_move["files"]}</td>' in html
