"""The guided database requests (issue 27): offered to stewards on a metastore's and a database's page."""

from __future__ import annotations

from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter

pytestmark = pytest.mark.django_db


def links(html: str, marker: str) -> dict[str, str]:
    """The guided links of a page: ``id`` -> the statement its request form starts from."""
    found = {}
    for part in html.split('id="guided-')[1:]:
        key, _, rest = part.partition('"')
        href = unescape(rest.split('href="', 1)[1].split('"', 1)[0])
        found[key] = parse_qs(urlsplit(href).query)["statement"][0]
    return found if marker in html else {}


def test_a_steward_is_offered_create_alter_and_drop_database(
    metastore: Metastore, people: dict[str, User], client: Client
) -> None:
    """The metastore page offers CREATE DATABASE; a database's page ALTER and DROP DATABASE (SET LOCATION only where
    the version has it); every offered statement parses; a viewer is offered none."""
    # given
    client.force_login(people["steward"])

    # when
    on_metastore = links(client.get(reverse("catalog:databases", args=[metastore.name])).content.decode(),
                         'id="metastore-requests"')  # fmt: skip
    on_database = links(client.get(reverse("catalog:tables", args=[metastore.name, "sales"])).content.decode(),
                        'id="database-requests"')  # fmt: skip
    client.force_login(people["viewer"])
    as_viewer = client.get(reverse("catalog:tables", args=[metastore.name, "sales"])).content.decode()

    # then
    assert list(on_metastore) == ["create_database"]
    assert {"database_properties", "database_owner", "drop_database"} <= set(on_database)
    assert ("database_location" in on_database) == metastore.schema.capabilities.database_set_location
    assert on_database["drop_database"] == "DROP DATABASE `sales` RESTRICT"
    assert on_database["drop_database_cascade"] == "DROP DATABASE `sales` CASCADE"  # sales holds tables
    for statement in [*on_metastore.values(), *on_database.values()]:
        assert parse_alter(statement).kind.endswith("_database")
    assert 'id="database-requests"' not in as_viewer
