"""
The worker's housekeeping on schedule (``operations/housekeeping.py``): each chore runs at the first poll and then
when its own interval has passed; each run is logged; a chore that fails is logged and the others still run.
"""

from __future__ import annotations

import io
import logging
from datetime import timedelta

import psycopg2
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils import timezone

from operations.housekeeping import CHORES, Chore, Housekeeping
from operations.models import IdempotencyKey

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def intervals(settings) -> None:
    settings.CATALOG_HOUSEKEEPING_STUCK_JOBS_SECONDS = 10
    settings.CATALOG_HOUSEKEEPING_IDEMPOTENCY_SECONDS = 100
    settings.CATALOG_HOUSEKEEPING_RELOCATIONS_CLEANUP_SECONDS = 1000
    settings.CATALOG_HOUSEKEEPING_NOTIFICATIONS_SECONDS = 5000


def expired_key(user: User, key: str) -> None:
    IdempotencyKey.objects.create(user=user, key=key, scope="POST /api/x/", request_hash="0" * 64)
    IdempotencyKey.objects.filter(key=key).update(created_at=timezone.now() - timedelta(days=30))


def ran(caplog: pytest.LogCaptureFixture) -> list[str]:
    names = [
        r.getMessage().split(" ran:")[0].removeprefix("Housekeeping: ")
        for r in caplog.records
        if " ran:" in r.getMessage()
    ]
    caplog.clear()
    return names


def test_each_chore_runs_on_its_own_interval(people: dict[str, User], caplog: pytest.LogCaptureFixture) -> None:
    """At the first poll all four run; at 50 s only the stuck jobs (10 s); at 100 s the Idempotency-Keys too; at
    1000 s the relocations cleanup too; at 5000 s the notifications too. An expired key waits for its chore's
    interval."""
    # given
    now = [0.0]
    chores = Housekeeping(clock=lambda: now[0])
    caplog.set_level(logging.INFO, logger="operations.housekeeping")
    expired_key(people["steward"], "first")

    # when / then
    assert chores.run_due() == ["Forgot 1 expired Idempotency-Key(s)."]
    assert ran(caplog) == ["stuck jobs", "idempotency keys", "relocations cleanup", "notifications"]

    expired_key(people["steward"], "second")
    now[0] = 50.0
    assert chores.run_due() == []
    assert ran(caplog) == ["stuck jobs"]
    assert IdempotencyKey.objects.filter(key="second").exists()

    now[0] = 100.0
    assert chores.run_due() == ["Forgot 1 expired Idempotency-Key(s)."]
    assert ran(caplog) == ["stuck jobs", "idempotency keys"]

    now[0] = 1000.0
    chores.run_due()
    assert ran(caplog) == ["stuck jobs", "idempotency keys", "relocations cleanup"]

    now[0] = 5000.0
    chores.run_due()
    assert ran(caplog) == ["stuck jobs", "idempotency keys", "relocations cleanup", "notifications"]


def test_a_failing_chore_is_logged_and_the_others_still_run(
    people: dict[str, User], caplog: pytest.LogCaptureFixture
) -> None:
    # given
    def broken() -> list[str]:
        raise OSError("the warehouse is not mounted")

    chores = Housekeeping([Chore("broken", "CATALOG_HOUSEKEEPING_STUCK_JOBS_SECONDS", broken), *CHORES])
    expired_key(people["steward"], "old")

    # when
    lines = chores.run_due()

    # then
    assert lines == [
        "Housekeeping: broken failed: the warehouse is not mounted",
        "Forgot 1 expired Idempotency-Key(s).",
    ]
    [error] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert error.getMessage() == "Housekeeping: broken failed"
    assert error.exc_info is not None
    assert not IdempotencyKey.objects.exists()


def test_the_worker_runs_the_chores(people: dict[str, User], caplog: pytest.LogCaptureFixture) -> None:
    """``manage.py run_jobs --once``: the four chores run once, and what they did is the worker's output."""
    # given
    caplog.set_level(logging.INFO, logger="operations.housekeeping")
    expired_key(people["steward"], "old")
    out = io.StringIO()

    # when
    call_command("run_jobs", once=True, stdout=out)

    # then
    assert "Forgot 1 expired Idempotency-Key(s)." in out.getvalue()
    assert ran(caplog) == ["stuck jobs", "idempotency keys", "relocations cleanup", "notifications"]


def test_a_chore_another_worker_is_running_is_skipped(
    people: dict[str, User], caplog: pytest.LogCaptureFixture
) -> None:
    """Two workers: while one holds the Idempotency-Keys chore's lock, the other skips that chore, runs the rest."""
    # given: another worker's connection holds the lock
    caplog.set_level(logging.INFO, logger="operations.housekeeping")
    expired_key(people["steward"], "old")
    params = connections[DEFAULT_DB_ALIAS].get_connection_params()
    other = psycopg2.connect(**{k: v for k, v in params.items() if k != "cursor_factory"})
    other.autocommit = True
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(hashtext(%s))", ["catalog-admin:housekeeping:idempotency keys"])

    # when
    try:
        lines = Housekeeping().run_due()
    finally:
        other.close()

    # then
    assert lines == []
    assert "Housekeeping: idempotency keys skipped: another worker is running it" in caplog.messages
    assert ran(caplog) == ["stuck jobs", "relocations cleanup", "notifications"]
    assert IdempotencyKey.objects.filter(key="old").exists()
