"""
Tables whose names are no single URL path segment (issue 9 case 5): Hive accepts ``a/b`` on every version and ``x?y``
or ``%41`` on 4.x, so such tables exist in real metastores. Every page and API list of their database must still
answer, and the links they give must lead to the table.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape
from rest_framework.test import APIClient

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Table
from catalog_admin.selectors.metastores import Metastore
from tests.fixtures.factories import api_key

pytestmark = pytest.mark.django_db(databases="__all__")

ODD_NAMES = ["year/2024", "x?y", "100%", "a%2fb"]  # Hive stores names lower-cased


@pytest.fixture
def steward(django_user_model) -> Client:
    client = Client()
    client.force_login(django_user_model.objects.create_user(username="steward", password="not-a-secret-1"))
    return client


@pytest.fixture
def api(django_user_model) -> APIClient:
    client = APIClient()
    user = django_user_model.objects.create_user(username="api-reader", password="not-used")
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
    return client


def rename_in_metastore(metastore: Metastore, database: str, table: str, new_name: str) -> None:
    """What a Hive client did: TBLS.TBL_NAME holds a name with characters that are special in URLs."""
    with allow_metastore_writes():
        updated = Table.objects.using(metastore.alias).filter(database__name=database, name=table).update(name=new_name)
    assert updated == 1


@pytest.mark.parametrize("name", ODD_NAMES)
def test_the_table_list_page_links_to_a_table_with_an_odd_name(
    steward: Client, metastore: Metastore, name: str
) -> None:
    """The database's table list renders (it answered 500 for everyone), and its link opens the table's page."""
    # given
    rename_in_metastore(metastore, "sales", "customers", name)
    link = reverse("catalog:table", args=[metastore.name, "sales", name])

    # when
    listing = steward.get(reverse("catalog:tables", args=[metastore.name, "sales"]))
    detail = steward.get(link)

    # then
    assert listing.status_code == 200
    assert f'href="{link}"' in listing.content.decode()
    assert detail.status_code == 200
    assert detail.context["table"].name == name
    assert escape(name) in detail.content.decode()


def test_the_partitions_of_a_table_with_an_odd_name_are_browsable(steward: Client, metastore: Metastore) -> None:
    """A partitioned table named 'year/2024': its partitions page and a partition's page answer, with working links."""
    # given
    rename_in_metastore(metastore, "sales", "orders", "year/2024")
    partitions = reverse("catalog:partitions", args=[metastore.name, "sales", "year/2024"])

    # when
    page = steward.get(partitions, {"page_size": 1})
    content = page.content.decode()

    # then
    assert page.status_code == 200
    assert f'action="{partitions}"' in content
    first = page.context["page"].items[0].name
    partition = steward.get(reverse("catalog:partition", args=[metastore.name, "sales", "year/2024", first]))
    assert partition.status_code == 200


def get_json(api: APIClient, url: str) -> dict[str, Any]:
    response = api.get(url)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("name", ODD_NAMES)
def test_the_api_lists_and_links_a_table_with_an_odd_name(api: APIClient, metastore: Metastore, name: str) -> None:
    """The API's table list answers and each row's url leads to that table's detail."""
    # given
    rename_in_metastore(metastore, "sales", "customers", name)
    tables = reverse("api:table-list", kwargs={"metastore": metastore.name, "database": "sales"})

    # when
    rows = get_json(api, f"{tables}?page_size=500")["results"]
    row = next(r for r in rows if r["name"] == name)
    detail = get_json(api, row["url"])

    # then
    assert detail["name"] == name
    assert detail["database"] == "sales"
