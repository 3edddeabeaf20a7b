"""``/account/notifications/``: each user chooses what they receive; the page says when e-mail cannot reach them."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from operations.models import NotificationPreference
from tests.fixtures.factories import html

pytestmark = pytest.mark.django_db


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_everything_is_chosen_until_the_user_chooses(people: dict[str, User], settings: Any) -> None:
    settings.CATALOG_EMAIL_ENABLED = True

    page = html(signed_in(people["approver"]).get("/account/notifications/"))

    assert page.count('type="checkbox"') == 4
    assert page.count("checked") == 4
    assert "approver@example.com" in page
    assert 'id="nav-account"' in page


def test_a_choice_is_kept_and_shown(people: dict[str, User]) -> None:
    client = signed_in(people["approver"])

    response = client.post("/account/notifications/", {"decisions": "on", "outcomes": "on"})

    assert response.status_code == 302
    preference = NotificationPreference.objects.get(user=people["approver"])
    assert (preference.awaiting_approval, preference.decisions, preference.failed_jobs) == (False, True, False)
    assert html(client.get("/account/notifications/")).count("checked") == 2


def test_the_page_says_when_no_email_can_reach_the_user(people: dict[str, User], settings: Any) -> None:
    settings.CATALOG_EMAIL_ENABLED = False
    assert "E-mail is not configured" in html(signed_in(people["viewer"]).get("/account/notifications/"))

    settings.CATALOG_EMAIL_ENABLED = True
    people["viewer"].email = ""
    people["viewer"].save()
    assert "has no e-mail address" in html(signed_in(people["viewer"]).get("/account/notifications/"))


def test_anonymous_callers_are_sent_to_sign_in(db: None) -> None:
    response = Client().get("/account/notifications/")

    assert response.status_code == 302
    assert "/login/" in response["Location"] or "login" in response["Location"]
