"""
The merge wizard and a merge request's page (hive23_pg into hive31_pg): the live preview (htmx partial) with rows in,
ids, blockers and the estimate; saving a draft request; the request page showing the merge preview; errors named.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from operations.models import ChangeRequest
from tests.fixtures.factories import html

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]

SOURCE, TARGET = "hive23_pg", "hive31_pg"


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _fields(**changes: str) -> dict[str, str]:
    warehouses = {c.name: c.warehouse_location for c in settings.METASTORE_CONFIGS}  # the quick tier: hive31_pg only
    source, target = warehouses.get(SOURCE, "/source"), warehouses[TARGET]
    return {
        "source": SOURCE,
        "target": TARGET,
        "databases": "sales, marketing",
        "renames": "sales=sales_imported\nmarketing=marketing_imported",
        "location_rules": f"{source}={target}/from_{SOURCE}",
        "reason": "consolidate",
        **changes,
    }


def test_the_wizard_page_renders_its_fields_without_inline_scripts(people: dict[str, User]) -> None:
    """The wizard has the five fields and posts its live preview by htmx; no inline script (CSP)."""
    # when
    response = signed_in(people["steward"]).get(reverse("operations:merge"))
    # then
    page = html(response)
    assert response.status_code == 200
    for name in ("source", "target", "databases", "renames", "location_rules"):
        assert f'name="{name}"' in page
    assert f'hx-post="{reverse("operations:merge-preview")}"' in page
    assert "<script>" not in page and "onclick=" not in page


@pytest.mark.matrix
def test_the_live_preview_shows_rows_ids_and_the_estimate(people: dict[str, User]) -> None:
    """The partial lists the databases as they arrive, PARTITIONS with an id range, the estimate's basis and the
    views rewritten to read their renamed databases."""
    # when
    response = signed_in(people["steward"]).post(reverse("operations:merge-preview"), _fields())
    # then
    page = html(response)
    assert response.status_code == 200
    assert "sales_imported" in page and "marketing_imported" in page
    assert 'id="merge-tables"' in page and ">PARTITIONS<" in page
    assert 'id="merge-estimate"' in page and "CATALOG_MERGE_PARTITIONS_PER_SECOND" in page
    assert 'id="merge-blockers"' not in page
    # the renamed database's view, as it arrives: reading marketing_imported
    assert 'id="merge-views"' in page and "marketing_imported.campaign_performance" in page
    assert "FROM `marketing_imported`.`clicks`" in page.replace("&#x60;", "`")


@pytest.mark.matrix
def test_a_blocked_merge_shows_its_blockers(people: dict[str, User]) -> None:
    """Without renames the target already has the databases: the partial names the blocker."""
    # when
    response = signed_in(people["steward"]).post(reverse("operations:merge-preview"), _fields(renames=""))
    # then
    page = html(response)
    assert 'id="merge-blockers"' in page and "database_exists" in page


def test_a_malformed_rename_is_named_in_the_preview(people: dict[str, User]) -> None:
    """A rename without '=' is reported in words, nothing is read or stored."""
    # when
    response = signed_in(people["steward"]).post(
        reverse("operations:merge-preview"), _fields(source=TARGET, renames="sales")
    )
    # then
    assert "Rename &#x27;sales&#x27; is not of the form src_db=new_name" in html(response)
    assert not ChangeRequest.objects.exists()


@pytest.mark.matrix
def test_saving_makes_a_draft_whose_page_shows_the_merge_preview(people: dict[str, User]) -> None:
    """POST saves a draft on the target and redirects to its page, which shows the merge preview (not an ALTER's)."""
    # given
    client = signed_in(people["steward"])
    # when
    response = client.post(reverse("operations:merge"), _fields())
    # then
    request = ChangeRequest.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("operations:detail", args=[request.pk])
    assert (request.metastore, request.risk) == (TARGET, "high")
    page = html(client.get(reverse("operations:detail", args=[request.pk])))
    assert 'id="merge-preview"' in page and "merge of <strong>hive23_pg</strong>" in page
    assert request.statement in page.replace("&#x27;", "'")


def test_a_viewer_cannot_save_a_merge(people: dict[str, User]) -> None:
    """The button is disabled with the reason, and a forced POST is refused with 403; nothing stored."""
    # given
    client = signed_in(people["viewer"])
    # when
    page = html(client.get(reverse("operations:merge")))
    response = client.post(reverse("operations:merge"), _fields(source=TARGET, target=TARGET))
    # then
    assert 'id="not-allowed"' in page and "Only stewards can request changes." in page
    assert response.status_code in (400, 403)
    assert not ChangeRequest.objects.exists()


@pytest.mark.matrix
def test_a_succeeded_merge_request_links_the_imported_databases(people: dict[str, User]) -> None:
    """The result: the request page links each imported database in the target's catalog."""
    # given
    client = signed_in(people["steward"])
    client.post(reverse("operations:merge"), _fields())
    request = ChangeRequest.objects.get()
    ChangeRequest.objects.filter(pk=request.pk).update(state="succeeded")  # as the merge job ends it
    # when
    page = html(client.get(reverse("operations:detail", args=[request.pk])))
    # then
    for name in ("sales_imported", "marketing_imported"):
        assert f'href="{reverse("catalog:tables", args=[TARGET, name])}" class="imported-database"' in page
