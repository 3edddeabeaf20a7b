"""Errors outside the selectors: unknown API routes answer JSON, lost connections a 503 page."""

import pytest
from django.db import OperationalError
from django.test import Client

from catalog_admin.errors import ErrorCode, metastore_unavailable
from catalog_admin.middleware import MetastoreErrorMiddleware


@pytest.mark.django_db
def test_unknown_api_route_answers_json_404(admin_client: Client) -> None:
    response = admin_client.get("/api/no-such-endpoint/")

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert "/api/no-such-endpoint/" in response.json()["message"]


@pytest.mark.django_db
def test_unknown_page_answers_the_404_page(admin_client: Client) -> None:
    response = admin_client.get("/no-such-page/")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_a_lost_connection_on_a_page_is_a_503_naming_the_failure(rf, admin_user) -> None:
    request = rf.get("/m/hive31_pg/")
    request.user = admin_user
    middleware = MetastoreErrorMiddleware(lambda r: None)

    response = middleware.process_exception(request, OperationalError("server closed the connection unexpectedly"))

    assert response.status_code == 503
    assert b"server closed the connection unexpectedly" in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/search/?q=ab%00", "/m/hive31_pg/db/sa%00les/", "/changes/?database=%00"])
def test_a_nul_character_in_a_page_address_is_a_400_not_a_500(admin_client: Client, url: str) -> None:
    response = admin_client.get(url)

    assert response.status_code == 400
    assert b"NUL" in response.content


@pytest.mark.django_db
def test_a_lost_connection_on_a_metastore_page_names_the_metastore(admin_client: Client, monkeypatch) -> None:
    """A page about one metastore reports it by name, in the same words as the API and the overview."""

    # given: the metastore goes away after its schema version was cached
    def lost(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly\nThis probably means ...")

    monkeypatch.setattr("catalog_admin.views.databases.list_databases", lost)

    # when
    response = admin_client.get("/m/hive31_pg/")

    # then
    assert response.status_code == 503
    assert (
        b"Metastore &#x27;hive31_pg&#x27; is unavailable: server closed the connection unexpectedly" in response.content
    )
    assert b"This probably means" not in response.content


def test_metastore_unavailable_is_one_error_with_or_without_a_name() -> None:
    """One conversion: the first line of the driver's text, the metastore named when known."""
    # given
    failure = OperationalError("could not connect\nIs the server running?")

    # when
    named = metastore_unavailable(failure, "hive23_my")
    unnamed = metastore_unavailable(OperationalError(""))

    # then
    assert named.code == ErrorCode.METASTORE_UNAVAILABLE
    assert named.message == "Metastore 'hive23_my' is unavailable: could not connect"
    assert named.details == {"metastore": "hive23_my"}
    assert unnamed.message == "A database is unavailable: OperationalError"
