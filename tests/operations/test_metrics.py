"""
``GET /metrics`` (``operations/metrics.py``, ``operations/views/metrics.py``): refused without the token or an
allowed network; the console's counters move when a job runs; a scrape takes the same number of queries whatever
the number of rows; throughput buckets and metastore health come from the rows and a ``SELECT 1``.
"""

from __future__ import annotations

import socket
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import DEFAULT_DB_ALIAS, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from catalog_admin.selectors.metastores import Metastore
from operations.models import ChangeRequest, Job, Notification
from operations.services.change_requests import change_request_execute
from operations.services.jobs import run_job
from tests.operations.services.test_jobs import approved

pytestmark = pytest.mark.django_db
TOKEN = "scrape-me-" + "x" * 24


@pytest.fixture(autouse=True)
def metrics_token(settings) -> None:
    settings.CATALOG_METRICS_TOKEN = TOKEN
    settings.CATALOG_METRICS_ALLOWED_NETWORKS = ()


def scrape(client: Client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def test_a_job_that_runs_moves_its_counters(
    client: Client, metastore: Metastore, people: dict[str, User], warehouse: Path
) -> None:
    """Before the job runs it is queued (and the queue has an age); after, it counts as finished with a duration."""
    # given
    request = change_request_execute(request=approved(people, metastore), user=people["steward"])
    job = Job.objects.get(change_request=request)
    finished = ("catalog_jobs_finished_total", (("kind", job.kind), ("state", "succeeded")))
    durations = ("catalog_job_duration_seconds_count", (("kind", job.kind),))
    before = scrape(client)

    # when
    run_job(job.pk)
    after = scrape(client)

    # then
    assert before[("catalog_jobs", (("kind", job.kind), ("state", "queued")))] == 1
    assert before[("catalog_job_queue_oldest_age_seconds", ())] > 0
    assert (before.get(finished, 0), after[finished]) == (0, 1)
    assert (before.get(durations, 0), after[durations]) == (0, 1)
    assert after[("catalog_change_requests", (("state", "succeeded"),))] == 1
    assert after[("catalog_job_queue_oldest_age_seconds", ())] == 0
    assert after[("catalog_database_up", (("kind", "metastore"), ("name", metastore.name)))] == 1


def test_the_outbox_shows_what_waits_and_what_failed(
    client: Client, metastore: Metastore, people: dict[str, User]
) -> None:
    # given: one e-mail sent, two waiting, one given up
    request = approved(people, metastore)
    for state in ("sent", "pending", "pending", "failed"):
        Notification.objects.create(
            request=request, audience="outcomes", outcome="failed", channel="email", recipient="a@example.com",
            subject="s", body="b", state=state, next_attempt_at=timezone.now(),
        )  # fmt: skip

    # when
    samples = scrape(client)

    # then
    assert samples[("catalog_notifications", (("channel", "email"), ("state", "pending")))] == 2
    assert samples[("catalog_notifications", (("channel", "email"), ("state", "failed")))] == 1
    assert samples[("catalog_notifications", (("channel", "webhook"), ("state", "pending")))] == 0


@pytest.mark.parametrize(
    ("header", "status", "code"),
    [
        (None, 401, "not_authenticated"),
        ("Bearer wrong", 403, "permission_denied"),
        ("Bearer caf\u00e9", 403, "permission_denied"),
        (f"Basic {TOKEN}", 403, "permission_denied"),
        (f"Bearer {TOKEN}", 200, None),
    ],
    ids=["no-token", "wrong-token", "non-ascii-token", "not-bearer", "token"],
)
def test_the_token_is_required(client: Client, header: str | None, status: int, code: str | None) -> None:
    # when
    response = client.get("/metrics", **({"HTTP_AUTHORIZATION": header} if header else {}))

    # then
    assert response.status_code == status
    if code:
        assert response.json()["code"] == code
        assert b"catalog_jobs" not in response.content
    else:
        assert b"catalog_http_request_duration_seconds" in response.content


def test_an_allowed_network_needs_no_token_and_nothing_configured_refuses_everyone(client: Client, settings) -> None:
    # given
    settings.CATALOG_METRICS_TOKEN = ""

    # when
    off = client.get("/metrics")
    settings.CATALOG_METRICS_ALLOWED_NETWORKS = (__import__("ipaddress").ip_network("10.0.0.0/8"),)
    elsewhere = client.get("/metrics", REMOTE_ADDR="192.0.2.1")
    inside = client.get("/metrics", REMOTE_ADDR="10.1.2.3")

    # then
    assert (off.status_code, off.json()["code"]) == (403, "permission_denied")
    assert "CATALOG_METRICS_TOKEN" in off.json()["message"]
    assert (elsewhere.status_code, elsewhere.json()["code"]) == (401, "not_authenticated")
    assert inside.status_code == 200


def change_request(people: dict[str, User], metastore: Metastore, state: str = "executing") -> ChangeRequest:
    return ChangeRequest(metastore=metastore.name, requester=people["steward"], operation={}, preview={}, state=state)


def add_jobs(people: dict[str, User], metastore: Metastore, count: int) -> None:
    now = timezone.now()
    requests = ChangeRequest.objects.bulk_create(
        change_request(people, metastore, state="succeeded") for _ in range(count)
    )
    Job.objects.bulk_create(
        Job(
            kind=f"kind{index % 3}",
            state=("queued", "running", "succeeded", "failed")[index % 4],
            change_request=request,
            started_at=now - timedelta(seconds=index + 1),
            finished_at=now,
            bytes_done=index * 1000,
            spark_app_id=f"app-{index}",
        )
        for index, request in enumerate(requests)
    )


def test_a_scrape_takes_the_same_queries_for_one_row_or_fifty(
    client: Client, metastore: Metastore, people: dict[str, User]
) -> None:
    """Four aggregate queries on the console's database (requests, jobs, finished jobs, the notification outbox),
    whatever the rows."""
    counts = []
    for rows in (1, 49):
        # given
        add_jobs(people, metastore, rows)

        # when
        with CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as queries:
            scrape(client)
        counts.append(len(queries))

    # then
    assert Job.objects.count() == 50
    assert counts == [4, 4]


def test_throughput_and_duration_buckets_come_from_bytes_over_run_time(
    client: Client, metastore: Metastore, people: dict[str, User]
) -> None:
    """10 MB in 2 s is 5 MB/s: in the 1e7 bucket, not the 1e6 one; its duration is in the 5 s bucket, not 1 s."""
    # given
    now = timezone.now()
    request = change_request(people, metastore)
    request.save()
    Job.objects.create(
        kind="relocate",
        state="succeeded",
        change_request=request,
        started_at=now - timedelta(seconds=2),
        finished_at=now,
        bytes_done=10_000_000,
        spark_app_id="app-1",
    )

    # when
    samples = scrape(client)

    # then
    def bucket(name: str, le: str) -> float:
        return samples[(name, (("kind", "relocate"), ("le", le)))]

    assert bucket("catalog_job_throughput_bytes_per_second_bucket", "1000000.0") == 0
    assert bucket("catalog_job_throughput_bytes_per_second_bucket", "10000000.0") == 1
    assert samples[("catalog_job_throughput_bytes_per_second_sum", (("kind", "relocate"),))] == pytest.approx(5e6)
    assert bucket("catalog_job_duration_seconds_bucket", "1.0") == 0
    assert bucket("catalog_job_duration_seconds_bucket", "5.0") == 1
    assert samples[("catalog_spark_applications_running", ())] == 0


@pytest.mark.django_db(databases="__all__")
def test_a_metastore_that_does_not_answer_is_down(client: Client, register_metastore) -> None:
    # given
    register_metastore("offline", "postgresql://postgres@127.0.0.1:1/nowhere")

    # when
    samples = scrape(client)

    # then
    assert samples[("catalog_database_up", (("kind", "metastore"), ("name", "offline")))] == 0
    assert samples[("catalog_database_up", (("kind", "console"), ("name", "console")))] == 1


@pytest.mark.django_db(databases="__all__")
def test_a_metastore_that_never_answers_is_down_after_the_timeout(client: Client, register_metastore, settings) -> None:
    """A server that accepts the connection and then says nothing: the scrape does not wait for it."""
    # given
    silent = socket.create_server(("127.0.0.1", 0))
    port = silent.getsockname()[1]
    register_metastore("silent", f"postgresql://postgres@127.0.0.1:{port}/nowhere")
    settings.CATALOG_METRICS_HEALTH_TIMEOUT_SECONDS = 0.5

    # when
    try:
        samples = scrape(client)
    finally:
        silent.close()

    # then
    assert samples[("catalog_database_up", (("kind", "metastore"), ("name", "silent")))] == 0
    assert samples[("catalog_database_up", (("kind", "metastore"), ("name", "hive31_pg")))] == 1
