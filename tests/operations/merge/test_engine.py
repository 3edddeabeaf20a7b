"""
The merge job on its engine (``operations.merge.engine``), through the one runner: without a Spark engine the worker
copies as the named ``local`` engine, its target connection idle (not in a transaction) while units copy, and the
publish opens the transaction; a merge that failed while copying resumes with ``job_resume`` from its journal
(completed units kept). On Spark (``test_a_merge_job_copies_on_spark…``): the data a location rule moves is copied by
the relocate program in a driver of its own, then the copy units run as the merge program in a ``spark-submit``
driver, its passwords from the metastores' configuration in the driver's environment only.
These tests commit into their own targets (``tests/fixtures/merge.py``).
"""

from __future__ import annotations

import secrets
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import psycopg2
import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.db import connections

from catalog_admin.db import MetastoreWriteForbidden, allow_metastore_writes
from catalog_admin.models import Database
from operations.merge import execute
from operations.merge.execute import merge_execute
from operations.merge.preview import merge_preview
from operations.models import ChangeRequest, Execution, Job, JobLogEntry, MergeImport
from operations.services import spark_jobs
from operations.services.change_requests import change_request_execute
from operations.services.jobs import job_cancel, job_resume
from operations.spark.entry import process_alive
from operations.spark.programs import merge as program
from tests.fixtures.merge import metastore_dump
from tests.fixtures.spark_connect import ConnectServer
from tests.operations.merge.test_execute import _request
from tests.operations.merge.test_workflow import _approved

pytestmark = [pytest.mark.django_db, pytest.mark.slow, pytest.mark.usefixtures("eager_jobs")]
IMPORTED = ("sales_imported", "marketing_imported")
POSTGRESQL_JDBC = Path("/usr/share/java/postgresql.jar")


def _executed(people: dict[str, User], request: ChangeRequest, capture: Any) -> Job:  # noqa: ANN401
    with capture(execute=True):
        change_request_execute(request=request, user=people["steward"])
    return Job.objects.get(change_request=request)


def _spark_engine(settings: Any, tmp_path: Path) -> None:  # noqa: ANN401
    """Merges copy on a local Spark driver (``spark-submit``) that finds the PostgreSQL JDBC driver, its work and
    launch folders under ``tmp_path``."""
    settings.CATALOG_MERGE_ENGINE, settings.CATALOG_SPARK_MASTER = "spark", "local[2]"
    settings.CATALOG_SPARK_CONF = f"spark.jars={POSTGRESQL_JDBC}"
    settings.CATALOG_SPARK_WORK_DIR, settings.CATALOG_SPARK_LOCAL_DIR = str(tmp_path / "work"), tmp_path / "launch"


def _idle_in_transaction(alias: str) -> list[tuple]:
    """Backends on ``alias``'s database idling inside a transaction, seen from a connection of the test's own."""
    db = django_settings.DATABASES[alias]
    watcher = psycopg2.connect(host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"])
    try:
        with watcher.cursor() as cursor:
            cursor.execute(
                "SELECT pid, query FROM pg_stat_activity WHERE datname = %s AND state LIKE 'idle in transaction%%'",
                [db["NAME"]],
            )
            return cursor.fetchall()
    finally:
        watcher.close()


def test_without_spark_the_worker_copies_as_the_local_engine_and_publishes_in_its_own_transaction(
    people: dict[str, User], django_capture_on_commit_callbacks, merge_target, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: every copy unit looks at the target's backends before it starts
    target = merge_target("3.1.0")
    request = _approved(people, target=target)
    copy_unit, seen = program._copy_unit, []

    def watched(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        seen.append((connections[target].in_atomic_block, _idle_in_transaction(target)))
        return copy_unit(*args, **kwargs)

    monkeypatch.setattr(program, "_copy_unit", watched)

    # when
    job = _executed(people, request, django_capture_on_commit_callbacks)

    # then: published, on the engine the job names; while units copied, the worker's target connection was in no
    # transaction (PostgreSQL begins one lazily, so the server showed none idle in one before either)
    assert job.state == "succeeded", job.error
    assert Database.objects.using(target).filter(name__in=IMPORTED).count() == 2
    assert len(seen) > 1 and seen == [(False, [])] * len(seen)
    assert job.spark_master == "local"
    assert JobLogEntry.objects.filter(job=job, message__startswith="Merging on the local engine").exists()


def test_a_merge_that_failed_while_copying_resumes_through_the_runner_from_its_journal(
    people: dict[str, User], django_capture_on_commit_callbacks, merge_target, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: the second copy unit fails
    target = merge_target("3.1.0")
    request = _approved(people, target=target)
    copy_unit, units = program._copy_unit, []

    def failing(spark, plan, step, low, high):  # noqa: ANN001, ANN202
        units.append(f"{step['table']}:{low}")
        if len(units) == 2:
            raise RuntimeError("the target went away")
        return copy_unit(spark, plan, step, low, high)

    monkeypatch.setattr(program, "_copy_unit", failing)

    # when
    job = _executed(people, request, django_capture_on_commit_callbacks)

    # then: the job failed resumable, the request still executing, nothing published, the first unit journaled
    request.refresh_from_db()
    assert (job.state, request.state) == ("failed", "executing"), job.error
    assert "the target went away" in job.error
    journal = MergeImport.objects.get(target=target)
    assert journal.state == MergeImport.State.FAILED and journal.completed == units[:1]
    assert not Database.objects.using(target).filter(name__in=IMPORTED).exists()

    # when: resumed through the runner (the page's and the API's Resume)
    with django_capture_on_commit_callbacks(execute=True):
        job_resume(job=job, user=people["steward"])

    # then: the same journal and execution finished, the completed unit not copied again
    job.refresh_from_db()
    request.refresh_from_db()
    journal.refresh_from_db()
    assert (job.state, request.state, journal.state) == ("succeeded", "succeeded", "published"), job.error
    assert request.execution_id == journal.execution_id
    assert Execution.objects.get(pk=journal.execution_id).state == Execution.State.SUCCEEDED
    assert units.count(units[0]) == 1 and units.count(units[1]) == 2
    assert Database.objects.using(target).filter(name__in=IMPORTED).count() == 2
    assert MergeImport.objects.filter(target=target).count() == 1


@pytest.mark.spark
@pytest.mark.skipif(not POSTGRESQL_JDBC.is_file(), reason="needs Debian's PostgreSQL JDBC driver")
def test_a_merge_job_copies_on_spark_with_the_passwords_in_the_drivers_environment_only(
    people: dict[str, User],
    django_capture_on_commit_callbacks,
    merge_target,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    settings,  # noqa: ANN001
) -> None:
    # given: a Spark engine, and passwords on both metastores' configuration (trust auth accepts any)
    target = merge_target("3.1.0")
    request = _approved(people, target=target)
    _spark_engine(settings, tmp_path)
    passwords = {alias: f"pw-{secrets.token_hex(8)}" for alias in (request.operation["source"], target)}
    for alias, password in passwords.items():
        monkeypatch.setitem(settings.DATABASES[alias], "PASSWORD", password)
    launched: list[dict[str, str]] = []
    launch = spark_jobs.spark.launch_driver

    def spied(engine, files, secrets=None):  # noqa: ANN001, ANN202
        launched.append(dict(secrets or {}))
        return launch(engine, files, secrets)

    monkeypatch.setattr(spark_jobs.spark, "launch_driver", spied)

    # when
    job = _executed(people, request, django_capture_on_commit_callbacks)

    # then: copied by a Spark application the job links, published by the worker
    assert job.state == "succeeded", job.error + job.log_tail
    assert job.spark_master == "local[2]" and job.spark_app_id.startswith("local-")
    assert Database.objects.using(target).filter(name__in=IMPORTED).count() == 2
    merge = MergeImport.objects.get(target=target)
    assert merge.completed and set(merge.completed) <= set(job.completed)
    # the data the location rule moves was copied by a driver of its own first, verified, every unit journaled
    assert merge.data_copy["units"] and sorted(merge.data_copy["completed"]) == sorted(
        unit["key"] for unit in merge.data_copy["units"]
    )
    log = " ".join(JobLogEntry.objects.filter(job=job).values_list("message", flat=True))
    assert log.count("Driver started on local[2]") == 2
    # the databases' passwords reached the rows' driver's environment only, and nothing written holds them
    assert len(launched) == 2 and not set(passwords.values()) & set(launched[0].values())
    assert set(passwords.values()) <= set(launched[1].values())
    written = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    assert written and not any(pw.encode() in data for pw in passwords.values() for data in written)
    rows = [
        str(list(Job.objects.filter(pk=job.pk).values())),
        str(list(JobLogEntry.objects.filter(job=job).values_list("message", flat=True))),
        str(list(MergeImport.objects.filter(target=target).values())),
        str(list(Execution.objects.filter(pk=job.change_request.execution_id).values())),
    ]
    assert not any(pw in row for pw in passwords.values() for row in rows)


def test_a_write_guard_refusal_stops_the_copy_with_a_named_error_and_writes_nothing(
    merge_target, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: the guard opens for the reservation only (the copy's statements then run with it closed)
    target = merge_target("3.1.0")
    request = _request("hive31_pg", target)
    opened: list[int] = []

    def once() -> AbstractContextManager[None]:
        opened.append(1)
        return allow_metastore_writes() if len(opened) == 1 else nullcontext()

    monkeypatch.setattr(execute, "allow_metastore_writes", once)
    before = metastore_dump(target, skip=("SEQUENCE_TABLE",))

    # when
    with pytest.raises(MetastoreWriteForbidden, match=f"Refused to write to metastore '{target}'.*DELETE"):
        merge_execute(request, merge_preview(request))

    # then: the copy stopped at its first statement; nothing of it reached the target
    journal = MergeImport.objects.get(target=target)
    assert journal.state == MergeImport.State.FAILED and journal.completed == []
    assert "MetastoreWriteForbidden" in journal.error
    assert metastore_dump(target, skip=("SEQUENCE_TABLE",)) == before


@pytest.mark.spark
@pytest.mark.skipif(not POSTGRESQL_JDBC.is_file(), reason="needs Debian's PostgreSQL JDBC driver")
def test_a_merge_cancelled_on_spark_stops_its_driver_and_publishes_nothing(
    people: dict[str, User],
    django_capture_on_commit_callbacks,
    merge_target,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    settings,  # noqa: ANN001
) -> None:
    # given: the cancel arrives as soon as the driver runs
    target = merge_target("3.1.0")
    request = _approved(people, target=target)
    _spark_engine(settings, tmp_path)
    record = spark_jobs._record_progress

    def cancelling(handle, reader, files, **given):  # noqa: ANN001, ANN003, ANN202
        if handle.job.cancel_requested_at is None:
            job_cancel(job=handle.job, user=people["steward"])
        return record(handle, reader, files, **given)

    monkeypatch.setattr(spark_jobs, "_record_progress", cancelling)

    # when
    job = _executed(people, request, django_capture_on_commit_callbacks)

    # then: the driver (and its application) stopped, nothing published, the journal kept with the request executing
    # (job_resume continues it; a second cancel discards it: tests/operations/merge/test_jobs.py)
    request.refresh_from_db()
    assert (job.state, request.state) == ("cancelled", "executing"), job.error
    assert job.driver_pid and not process_alive(job.driver_pid)
    assert JobLogEntry.objects.filter(job=job, message="The driver was stopped").exists()
    assert not Database.objects.using(target).filter(name__in=IMPORTED).exists()
    journal = MergeImport.objects.get(target=target)
    assert journal.state == MergeImport.State.FAILED and journal.completed == job.completed


@pytest.mark.skipif(not POSTGRESQL_JDBC.is_file(), reason="needs Debian's PostgreSQL JDBC driver")
def test_a_merge_job_copies_through_spark_connect_when_the_engine_is_a_connect_server(
    people: dict[str, User],
    django_capture_on_commit_callbacks,
    merge_target,
    spark_connect: ConnectServer,
    tmp_path: Path,
    settings,  # noqa: ANN001
) -> None:
    # given: CATALOG_SPARK_MASTER names a Spark Connect server (auto: merges copy there)
    target = merge_target("3.1.0")
    request = _approved(people, target=target)
    settings.CATALOG_SPARK_MASTER, settings.CATALOG_SPARK_MASTER_UI = spark_connect.url, spark_connect.ui
    settings.CATALOG_SPARK_WORK_DIR, settings.CATALOG_SPARK_LOCAL_DIR = str(tmp_path / "work"), tmp_path / "launch"

    # when
    job = _executed(people, request, django_capture_on_commit_callbacks)

    # then: copied on the server (its application and UI linked), published by the worker
    assert job.state == "succeeded", job.error + job.log_tail
    assert (job.spark_master, job.spark_ui_url) == (spark_connect.url, spark_connect.ui) and job.spark_app_id
    assert Database.objects.using(target).filter(name__in=IMPORTED).count() == 2
    merge = MergeImport.objects.get(target=target)
    assert merge.completed and set(merge.completed) <= set(job.completed)
    assert sorted(merge.data_copy["completed"]) == sorted(unit["key"] for unit in merge.data_copy["units"]) != []
    assert set(merge.data_copy["completed"]) <= set(job.completed)  # copied by a driver of the server's
