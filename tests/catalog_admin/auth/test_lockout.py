"""Login throttling (django-axes, set up by catalog_admin/auth/config.py): repeated failures lock a user name out."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from catalog_admin.auth.config import sign_in_settings

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _three_failures(settings: Any) -> None:
    for name, value in sign_in_settings({"CATALOG_LOGIN_FAILURE_LIMIT": "3"}).items():
        setattr(settings, name, value)
    get_user_model().objects.create_user("erin", password="erin-pw-123")
    get_user_model().objects.create_user("frank", password="frank-pw-123")


def _post(username: str, password: str) -> int:
    return Client().post("/accounts/login/", {"username": username, "password": password}).status_code


def test_failures_lock_the_user_out_even_with_the_right_password() -> None:
    """The third failure locks erin out (429), her right password too; frank is not locked out."""
    # given: two failures
    assert [_post("erin", "wrong") for _ in range(2)] == [200, 200]

    # when: the third
    assert _post("erin", "wrong") == 429

    # then
    assert _post("erin", "erin-pw-123") == 429
    assert _post("frank", "frank-pw-123") == 302  # another user name is not locked out


def test_a_successful_sign_in_resets_the_count() -> None:
    """Two failures, a success, two failures: never three in a row, never locked out."""
    # given
    assert [_post("erin", "wrong") for _ in range(2)] == [200, 200]

    # when
    assert _post("erin", "erin-pw-123") == 302

    # then
    assert [_post("erin", "wrong") for _ in range(2)] == [200, 200]
    assert _post("erin", "erin-pw-123") == 302


def test_throttling_off(settings: Any) -> None:
    """CATALOG_LOGIN_THROTTLING=false: failures lock nobody out."""
    # given
    settings.AXES_ENABLED = sign_in_settings({"CATALOG_LOGIN_THROTTLING": "false"})["AXES_ENABLED"]

    # when / then
    assert [_post("erin", "wrong") for _ in range(4)] == [200] * 4
    assert _post("erin", "erin-pw-123") == 302
