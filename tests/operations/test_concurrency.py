"""
Change requests under concurrency, on the PostgreSQL 3.1 metastore, through the REST API.

Each racer is a thread with its own database connections, and the racers are released together. Where the race
is about what happens after the freshness check, both racers are held at a second barrier right after it, so that
they really reach the guarded transition together (not one after the other by luck):

* two approvers approving at once: the state moves once. With one approval needed, one approval counts and the
  other approver is told the request is already approved (409 ``invalid_state``); with two needed, both count;
* two executions started at once: one job runs the ALTER, the other caller gets ``invalid_state``; the same caller
  retrying with the same ``Idempotency-Key`` gets the first answer replayed; the metastore changes once;
* an execution racing a Hive-side change of the same table (a row written to ``TABLE_PARAMS`` by another session,
  as Hive's own metastore client would), committed after the approval, while the job waits in the queue, or while
  the execution waits for the table's lock: the execution is refused as stale and nothing of it is applied.
  With the Spark witness (``-m spark``), the racing change is Spark SQL's ``ALTER TABLE … SET TBLPROPERTIES``.

The tests commit (``transaction=True``): the console's database is flushed after each test (the role groups are put
back at the end of the module), and ``committed_metastore`` puts back every TABLE_PARAMS row the test changed and
then proves the whole metastore is as before. The changes are metadata only; the ``warehouse`` fixture proves the
warehouse untouched too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import psycopg2
import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connections, transaction
from django.urls import reverse
from rest_framework.test import APIClient

from catalog_admin.db import allow_metastore_writes
from catalog_admin.selectors.metastores import Metastore
from operations.models import Approval, AuditRecord, ChangeRequest, Execution, Job
from operations.services import change_requests
from operations.services.jobs import run_job
from tests.fixtures.factories import make_user
from tests.fixtures.operations import events_restored, metastore_dump

ALIAS = "hive31_pg"
PROPERTIES = "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='crm')"
HIVE_PARAM = ("changed_by_hive", "1")
T = TypeVar("T")

# Threads racing on committed transactions: the full suite runs them, the quick tier does not.
pytestmark = [pytest.mark.usefixtures("restore_roles"), pytest.mark.slow]

SPARK_ALIAS = "spark_pg"


def on_hive31_pg(test: Callable[..., None]) -> Callable[..., None]:
    """A transactional test on the console's database and the PostgreSQL 3.1 metastore."""
    test = pytest.mark.parametrize("metastore_alias", [ALIAS], indirect=True)(test)
    return pytest.mark.django_db(transaction=True, databases=["default", ALIAS])(test)


# Set-up and clean-up -------------------------------------------------------------------------------------------------


@pytest.fixture
def committed_metastore(metastore: Metastore, warehouse: Path) -> Iterator[dict[str, list[tuple[Any, ...]]]]:
    """The metastore's dump before the test; afterwards every TABLE_PARAMS row is put back as it was (committed), and
    the whole metastore must equal the dump again (else it is rebuilt from scratch and the test fails)."""
    before = metastore_dump(metastore.alias, events=False)
    with events_restored(metastore.alias):
        yield before
    now = set(metastore_dump(metastore.alias)["TABLE_PARAMS"])
    was = set(before["TABLE_PARAMS"])
    with allow_metastore_writes(), transaction.atomic(using=metastore.alias):
        with connections[metastore.alias].cursor() as cursor:
            for table_id, key, _value in now - was:
                cursor.execute('DELETE FROM "TABLE_PARAMS" WHERE "TBL_ID" = %s AND "PARAM_KEY" = %s', [table_id, key])
            cursor.executemany(
                'INSERT INTO "TABLE_PARAMS" ("TBL_ID", "PARAM_KEY", "PARAM_VALUE") VALUES (%s, %s, %s)',
                sorted(was - now, key=repr),
            )
    if metastore_dump(metastore.alias, events=False) != before:
        from tests.fixtures.metastores import build_metastores, official_schema_map

        build_metastores({metastore.alias: official_schema_map()[metastore.alias]})
        pytest.fail(f"the test left {metastore.alias} changed beyond TABLE_PARAMS: it was rebuilt")


@pytest.fixture
def people(db: None) -> dict[str, User]:
    """A steward (the requester), two approvers and an admin (an operator); ``api`` gives each a token client."""
    return {
        "steward": make_user("steward", "steward"),
        "approver": make_user("approver", "approver"),
        "approver2": make_user("approver2", "approver"),
        "admin": make_user("admin", "admin"),
    }


# Racing ----------------------------------------------------------------------------------------------------------


def at_once(*calls: Callable[[], T]) -> list[T]:
    """Run each call on its own thread (its own database connections), all released together; their results."""
    start = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []

    def run(index: int, call: Callable[[], T]) -> None:
        try:
            start.wait(timeout=30)
            results[index] = call()
        except BaseException as exc:  # reported by the test's thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a racer is stuck"
    if errors:
        raise errors[0]
    return results


def held_after_freshness_check(monkeypatch: pytest.MonkeyPatch, racers: int = 2) -> None:
    """Each racer waits, once the service has checked the preview is fresh, until all racers have checked it."""
    checked = threading.Barrier(racers)
    fresh_preview = change_requests._fresh_preview

    def check_then_wait(request: ChangeRequest) -> Any:
        preview = fresh_preview(request)
        checked.wait(timeout=30)
        return preview

    monkeypatch.setattr(change_requests, "_fresh_preview", check_then_wait)


def post(client: APIClient, pk: int, action: str, body: dict[str, Any] | None = None, **headers: str) -> Any:
    return client.post(
        reverse(f"operations_api:change-request-{action}", kwargs={"pk": pk}), body or {}, format="json", **headers
    )


def submitted(api: dict[str, APIClient], statement: str = PROPERTIES) -> int:
    response = api["steward"].post(
        reverse("operations_api:change-request-list"), {"statement": statement, "metastore": ALIAS}, format="json"
    )
    assert response.status_code == 201, response.content
    pk = response.json()["id"]
    assert post(api["steward"], pk, "submit").status_code == 200
    return pk


def approved(api: dict[str, APIClient]) -> int:
    pk = submitted(api)
    response = post(api["approver"], pk, "approve")
    assert (response.status_code, response.json()["state"]) == (200, "approved"), response.content
    return pk


def audit_of(pk: int) -> list[tuple[str, str]]:
    return list(AuditRecord.objects.filter(request_id_ref=pk).order_by("id").values_list("action", "outcome"))


def params_change(before: dict[str, list[tuple[Any, ...]]], alias: str) -> dict[str, set[tuple[Any, ...]]]:
    """How the metastore differs from ``before``: ``{table: rows added or removed}`` (``+``/``-`` prefixed)."""
    after = metastore_dump(alias, events=False)
    changed = {}
    for table in sorted(set(before) | set(after)):
        was, now = set(before.get(table, [])), set(after.get(table, []))
        if was != now:
            changed[table] = {("+", *row) for row in now - was} | {("-", *row) for row in was - now}
    return changed


def customers_id(alias: str) -> int:
    with connections[alias].cursor() as cursor:
        cursor.execute(
            'SELECT t."TBL_ID" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID"'
            ' WHERE d."NAME" = %s AND t."TBL_NAME" = %s',
            ["sales", "customers"],
        )
        return cursor.fetchone()[0]


# Hive's side: another session on the metastore database ----------------------------------------------------------


class HiveSession:
    """A session of its own on the metastore's database, as Hive's metastore client would have."""

    def __init__(self, alias: str) -> None:
        db = settings.DATABASES[alias]
        self.connection = psycopg2.connect(
            host=db["HOST"],
            port=db["PORT"] or 5432,
            user=db["USER"],
            password=db.get("PASSWORD") or None,
            dbname=db["NAME"],
        )

    def add_param(self, table_id: int, *, commit: bool = True) -> None:
        """Hive sets a table property: a new TABLE_PARAMS row (the insert locks the TBLS row's key until commit)."""
        with self.connection.cursor() as cursor:
            cursor.execute(
                'INSERT INTO "TABLE_PARAMS" ("TBL_ID", "PARAM_KEY", "PARAM_VALUE") VALUES (%s, %s, %s)',
                [table_id, *HIVE_PARAM],
            )
        if commit:
            self.connection.commit()

    def commit(self) -> None:
        self.connection.commit()

    def close(self) -> None:
        self.connection.close()


@pytest.fixture
def hive(metastore: Metastore) -> Iterator[HiveSession]:
    session = HiveSession(metastore.alias)
    yield session
    session.close()


def sessions_waiting_for_a_lock(alias: str) -> int:
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'",
            [settings.DATABASES[alias]["NAME"]],
        )
        return cursor.fetchone()[0]


# Two approvers at once -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("needed", [1, 2], ids=["one-approval-needed", "two-approvals-needed"])
@pytest.mark.usefixtures("eager_jobs")
@on_hive31_pg
def test_two_approvers_approving_at_once_move_the_state_once(
    metastore: Metastore, api: dict[str, APIClient], monkeypatch: pytest.MonkeyPatch, settings, needed: int
) -> None:
    """Both approvers pass the freshness check, then approve together: the request is approved exactly once. With one
    approval needed, the second approver is told it is already approved and their approval is not recorded; with
    two needed, both approvals count and the second one approves it."""
    # given
    settings.CATALOG_APPROVAL_POLICY = {"default": needed, "rules": []}
    pk = submitted(api)
    held_after_freshness_check(monkeypatch)

    # when
    responses = at_once(
        lambda: post(api["approver"], pk, "approve", {"comment": "one"}),
        lambda: post(api["approver2"], pk, "approve", {"comment": "two"}),
    )

    # then
    change = ChangeRequest.objects.get(pk=pk)
    assert change.state == "approved"
    outcomes = sorted(
        (r.status_code, r.json().get("state") or r.json()["code"], r.json().get("approvals_given")) for r in responses
    )
    transitions = [outcome for action, outcome in audit_of(pk) if action == "approve"]
    if needed == 1:
        assert outcomes == [(200, "approved", 1), (409, "invalid_state", None)]
        loser = next(r.json() for r in responses if r.status_code == 409)
        assert loser["message"] == f"Request #{pk} is approved: it cannot be approved now."
        assert Approval.objects.filter(request_id=pk).count() == 1
        assert transitions == ["approved", "refused"]  # the loser's refusal is audited, as every refusal is
    else:
        # The first approver's answer is read after their commit: it may already show the second approval.
        assert [status for status, _state, _given in outcomes] == [200, 200]
        assert outcomes[0] == (200, "approved", 2)
        assert Approval.objects.filter(request_id=pk, decision="approve").count() == 2
        assert transitions == ["approval recorded", "approved"]


# Two executions at once ------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("eager_jobs")
@on_hive31_pg
def test_two_executions_started_at_once_run_the_alter_once(
    metastore: Metastore,
    api: dict[str, APIClient],
    committed_metastore: dict[str, list[tuple[Any, ...]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The requester and an operator both pass the freshness check, then start the execution together: one gets
    the job (which runs the ALTER), the other invalid_state; one job, one execution, the property set once."""
    # given
    pk = approved(api)
    held_after_freshness_check(monkeypatch)

    # when
    responses = at_once(lambda: post(api["steward"], pk, "execute"), lambda: post(api["admin"], pk, "execute"))

    # then
    assert sorted(r.status_code for r in responses) == [202, 409]
    loser = next(r.json() for r in responses if r.status_code == 409)
    assert loser["code"] == "invalid_state"
    assert loser["details"]["action"] == "execute"  # the action refused, as everywhere (not its target state)
    change = ChangeRequest.objects.get(pk=pk)
    assert change.state == "succeeded"
    assert Job.objects.filter(change_request_id=pk).get().state == "succeeded"
    assert Execution.objects.get().state == "succeeded"
    assert [a for a, o in audit_of(pk) if o != "refused"] == ["create", "submit", "approve", "execute", "finish"]
    assert [(a, o) for a, o in audit_of(pk) if o == "refused"] == [("execute", "refused")]  # the loser's, audited
    assert params_change(committed_metastore, metastore.alias) == {
        "TABLE_PARAMS": {("+", customers_id(metastore.alias), "team", "crm")}
    }


@pytest.mark.usefixtures("eager_jobs")
@on_hive31_pg
def test_the_same_execution_retried_at_once_with_one_idempotency_key_runs_once(
    metastore: Metastore, api: dict[str, APIClient], committed_metastore: dict[str, list[tuple[Any, ...]]]
) -> None:
    """A client that sends its execute twice at once with the same Idempotency-Key: the second call waits for the
    first to commit and gets its answer replayed; one job runs the ALTER."""
    # given
    pk = approved(api)

    # when
    responses = at_once(
        lambda: post(api["steward"], pk, "execute", HTTP_IDEMPOTENCY_KEY="execute-once"),
        lambda: post(api["steward"], pk, "execute", HTTP_IDEMPOTENCY_KEY="execute-once"),
    )

    # then
    assert [r.status_code for r in responses] == [202, 202]
    assert sorted(r.headers.get("Idempotent-Replayed", "") for r in responses) == ["", "true"]
    assert responses[0].json() == responses[1].json()
    assert Job.objects.filter(change_request_id=pk).count() == 1
    assert Execution.objects.count() == 1
    assert ChangeRequest.objects.get(pk=pk).state == "succeeded"
    assert params_change(committed_metastore, metastore.alias) == {
        "TABLE_PARAMS": {("+", customers_id(metastore.alias), "team", "crm")}
    }


# An execution racing a Hive-side change --------------------------------------------------------------------------


def hive_row(alias: str) -> dict[str, set[tuple[Any, ...]]]:
    """The metastore's only change: Hive's own row."""
    return {"TABLE_PARAMS": {("+", customers_id(alias), *HIVE_PARAM)}}


@pytest.mark.usefixtures("eager_jobs")
@on_hive31_pg
def test_a_hive_change_committed_after_the_approval_makes_the_execution_stale(
    metastore: Metastore,
    api: dict[str, APIClient],
    committed_metastore: dict[str, list[tuple[Any, ...]]],
    hive: HiveSession,
) -> None:
    """Hive sets a property after the approval: the execute command answers stale_preview; no job, no execution."""
    # given
    pk = approved(api)
    hive.add_param(customers_id(metastore.alias))

    # when
    response = post(api["steward"], pk, "execute")

    # then
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "stale_preview"
    assert body["details"]["previewed_fingerprint"] != body["details"]["current_fingerprint"]
    assert ChangeRequest.objects.get(pk=pk).state == "approved"
    assert not Job.objects.exists() and not Execution.objects.exists()
    assert params_change(committed_metastore, metastore.alias) == hive_row(metastore.alias)


@on_hive31_pg
def test_a_hive_change_committed_while_the_job_is_queued_fails_the_job_before_anything_runs(
    metastore: Metastore,
    api: dict[str, APIClient],
    committed_metastore: dict[str, list[tuple[Any, ...]]],
    hive: HiveSession,
    settings,
) -> None:
    """The execution is accepted and its job queued; Hive sets a property before a worker picks the job up: the job
    finds the table changed, fails the request and runs nothing."""
    # given
    settings.CATALOG_JOBS_MODE = "tasks"
    pk = approved(api)
    assert post(api["steward"], pk, "execute").status_code == 202
    hive.add_param(customers_id(metastore.alias))

    # when
    job = run_job(Job.objects.get(change_request_id=pk).pk)

    # then
    assert job.state == "failed"
    assert job.error == (
        "The table changed since the approved preview (Table parameters (current table), "
        "Table parameters (after the change)); nothing was executed."
    )
    change = ChangeRequest.objects.get(pk=pk)
    assert (change.state, change.error) == ("failed", job.error)
    assert not Execution.objects.exists()
    assert params_change(committed_metastore, metastore.alias) == hive_row(metastore.alias)


@on_hive31_pg
def test_a_hive_change_racing_the_execution_for_the_table_lock_makes_it_stale(
    metastore: Metastore,
    api: dict[str, APIClient],
    committed_metastore: dict[str, list[tuple[Any, ...]]],
    hive: HiveSession,
    settings,
) -> None:
    """Hive's transaction has written a property but not committed yet when the job starts: the job's preview does
    not see it and the execution waits for the table's lock. Hive commits; the execution, now holding the lock, sees
    the change and refuses: the execution fails as stale and nothing of it is applied."""
    # given: a queued job, and Hive's uncommitted write
    settings.CATALOG_JOBS_MODE = "tasks"
    pk = approved(api)
    assert post(api["steward"], pk, "execute").status_code == 202
    job_id = Job.objects.get(change_request_id=pk).pk
    hive.add_param(customers_id(metastore.alias), commit=False)

    # when: the worker runs the job while Hive's transaction is open, and Hive commits once the job waits for it
    def commit_once_the_execution_waits() -> None:
        deadline = time.monotonic() + 30
        while sessions_waiting_for_a_lock(metastore.alias) == 0:
            assert time.monotonic() < deadline, "the execution never waited for the table's lock"
            time.sleep(0.05)
        hive.commit()

    job, _ = at_once(lambda: run_job(job_id), commit_once_the_execution_waits)

    # then
    assert job.state == "failed"
    execution = Execution.objects.get()
    assert execution.state == "failed"
    assert (
        execution.error == "`sales`.`customers` changed since the preview (params); preview it again before executing."
    )
    change = ChangeRequest.objects.get(pk=pk)
    assert (change.state, change.execution_id) == ("failed", execution.pk)
    assert params_change(committed_metastore, metastore.alias) == hive_row(metastore.alias)


# The same race with Spark ------------------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.usefixtures("eager_jobs")
@pytest.mark.django_db(transaction=True, databases=["default", SPARK_ALIAS])
def test_a_spark_sql_change_after_the_approval_makes_the_execution_stale(
    spark, spark_metastore: Metastore, api: dict[str, APIClient]
) -> None:
    """Spark SQL (Hive 2.3's metastore client) sets a property of the table after the console's request was
    approved: the execution is refused as stale_preview, and Spark still sees only its own change."""
    # given: a table made by Spark, and an approved request to set one of its properties
    database = "race_console"
    spark.sql(f"CREATE DATABASE {database}")
    try:
        spark.sql(f"CREATE TABLE {database}.orders (id int) STORED AS PARQUET TBLPROPERTIES ('team'='data')")
        response = api["steward"].post(
            reverse("operations_api:change-request-list"),
            {"statement": f"ALTER TABLE {database}.orders SET TBLPROPERTIES ('team'='crm')", "metastore": SPARK_ALIAS},
            format="json",
        )
        assert response.status_code == 201, response.content
        pk = response.json()["id"]
        assert post(api["steward"], pk, "submit").status_code == 200
        assert post(api["approver"], pk, "approve").json()["state"] == "approved"
        spark.sql(f"ALTER TABLE {database}.orders SET TBLPROPERTIES ('changed_by'='spark')")
        before = metastore_dump(SPARK_ALIAS)

        # when
        response = post(api["steward"], pk, "execute")

        # then
        assert response.status_code == 409, response.content
        assert response.json()["code"] == "stale_preview"
        assert ChangeRequest.objects.get(pk=pk).state == "approved"
        assert not Job.objects.exists() and not Execution.objects.exists()
        assert metastore_dump(SPARK_ALIAS) == before
        properties = {row.key: row.value for row in spark.sql(f"SHOW TBLPROPERTIES {database}.orders").collect()}
        assert (properties["team"], properties["changed_by"]) == ("data", "spark")
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {database} CASCADE")
