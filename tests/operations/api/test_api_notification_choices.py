"""``/api/account/notifications/``: what the caller receives, read and changed; bad input named, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from operations.models import NotificationPreference

pytestmark = pytest.mark.django_db
URL = "/api/account/notifications/"


def test_everything_until_the_caller_chooses_then_their_choice(api: dict[str, APIClient]) -> None:
    assert api["approver"].get(URL).json() == {
        "awaiting_approval": True, "decisions": True, "outcomes": True, "failed_jobs": True,
    }  # fmt: skip

    answer = api["approver"].patch(URL, {"awaiting_approval": False}, format="json")

    assert answer.status_code == 200
    assert answer.json()["awaiting_approval"] is False and answer.json()["decisions"] is True
    assert api["approver2"].get(URL).json()["awaiting_approval"] is True  # another user's choices are their own


@pytest.mark.parametrize(
    ("body", "named"),
    [({"all": False}, "all"), ({"decisions": "no"}, "decisions"), ({"outcomes": None}, "outcomes"), ([True], "body")],
)
def test_bad_choices_are_refused_naming_them_and_nothing_is_kept(
    api: dict[str, APIClient], body: dict[str, object], named: str
) -> None:
    answer = api["approver"].patch(URL, body, format="json")

    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid_parameter"
    assert named in answer.json()["message"]
    assert not NotificationPreference.objects.exists()


def test_anonymous_callers_are_refused(db: None) -> None:
    assert APIClient().get(URL).status_code == 401


def test_the_schema_documents_the_choices(api: dict[str, APIClient], tmp_path: Path) -> None:
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))

    assert "notification_choices_update" in (tmp_path / "schema.yaml").read_text()
