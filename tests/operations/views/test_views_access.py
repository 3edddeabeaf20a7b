"""The access pages: who can read a table, what a user can read, a viewer's read-access button, a steward's statement,
and a Ranger-governed metastore saying so."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.urls import reverse

from catalog_admin.selectors.metastores import Metastore
from operations.models import ChangeRequest
from tests.fixtures.factories import html

pytestmark = [pytest.mark.django_db, pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)]


def test_the_table_page_links_to_who_can_read_it_and_the_page_lists_the_seeded_grants(
    client, metastore: Metastore, people: dict[str, User]
) -> None:
    # given
    client.force_login(people["viewer"])
    table_page = client.get(reverse("catalog:table", args=[metastore.name, "sales", "orders"]))
    # when
    page = client.get(reverse("operations:access-table", args=[metastore.name, "sales", "orders"]))
    # then
    assert reverse("operations:access-table", args=[metastore.name, "sales", "orders"]) in html(table_page)
    assert page.status_code == 200
    assert 'id="request-read-access"' in html(page) and 'id="privilege-statement"' not in html(page)
    assert 'data-via="owner"' in html(page) and "Ranger" not in html(page)


def test_a_viewer_asks_for_read_access_and_gets_a_submitted_request(
    client, metastore: Metastore, people: dict[str, User]
) -> None:
    client.force_login(people["viewer"])
    response = client.post(reverse("operations:access-request", args=[metastore.name]),
                           {"database": "sales", "table": "orders", "reason": "reporting"})  # fmt: skip
    change = ChangeRequest.objects.get(requester=people["viewer"])
    assert response.status_code == 302 and response["Location"] == reverse("operations:detail", args=[change.pk])
    assert change.state == "submitted" and change.statement == "GRANT SELECT ON TABLE sales.orders TO USER viewer"
    detail = client.get(reverse("operations:detail", args=[change.pk]))
    assert 'id="privilege-rows"' in html(detail) and "TBL_PRIVS" in html(detail)


def test_a_steward_types_a_grant_and_a_bad_one_is_named(client, metastore: Metastore, people: dict[str, User]) -> None:
    client.force_login(people["steward"])
    url = reverse("operations:access-statement", args=[metastore.name])
    ok = client.post(url, {"statement": "GRANT SELECT ON DATABASE sales TO ROLE analyst_team", "database": "sales"})
    bad = client.post(url, {"statement": "GRANT ALTER ON DATABASE sales TO USER bob", "database": "sales"}, follow=True)
    assert ok.status_code == 302 and ChangeRequest.objects.filter(requester=people["steward"]).count() == 1
    assert "Privilege: ALTER is not supported in sql standard authorization mode" in html(bad)


def test_what_a_user_can_read(client, metastore: Metastore, people: dict[str, User]) -> None:
    client.force_login(people["viewer"])
    page = client.get(reverse("operations:access-principal", args=[metastore.name, "user", "alice"]))
    assert page.status_code == 200 and 'id="readable-objects"' in html(page)


def test_a_ranger_governed_metastore_says_so(client, metastore: Metastore, people: dict[str, User], settings) -> None:
    settings.METASTORE_CONFIGS = [
        replace(c, authorization="ranger") if c.name == metastore.name else c for c in django_settings.METASTORE_CONFIGS
    ]
    client.force_login(people["viewer"])
    page = client.get(reverse("operations:access-table", args=[metastore.name, "sales", "orders"]))
    assert 'id="ranger-notice"' in html(page) and 'id="request-read-access"' not in html(page)
