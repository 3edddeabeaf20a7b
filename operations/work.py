"""
The work of one metastore, for the home page: selectors (reads only), each bounded.

What waits for the signed-in user (approvals they can give, with what an approver weighs: the reason, the risk
criteria and the partitions; their drafts, their rejected requests, their submitted requests waiting on others), what
is approved but not run, scheduled (and late), running with its progress, recently executed (the console's own
database), and the tables whose partitions lie outside the table's root (the metastore: one grouped statement over its
partitions, loaded by the page after itself; ``benchmarks/home.py`` times both on 50,000 partitions with its
``EXPLAIN``). Every list is cut at :data:`HOME_LIMIT`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connections
from django.db.models import OuterRef, QuerySet, Subquery

from catalog_admin.models import Database, Partition, StorageDescriptor, Table
from catalog_admin.selectors.metastores import Metastore
from operations.choices import ChangeRequestState, JobState
from operations.models import ChangeRequest, Execution, Job
from operations.selectors import inbox
from operations.sql import MetastoreSql

__all__ = (
    "HOME_LIMIT",
    "Anomaly",
    "ApprovalFacts",
    "MetastoreWork",
    "anomaly_sql",
    "approval_facts",
    "metastore_work",
    "partition_anomalies",
)

HOME_LIMIT = 10


@dataclass(frozen=True)
class Anomaly:
    """A table with partitions outside its own root (a location that is not ``<table location>/…``)."""

    database: str
    table: str
    outside_root: int


@dataclass(frozen=True)
class ApprovalFacts:
    """What an approver weighs before a one-click approval: the risk criteria that fired (name, level, label,
    explanation) and how many partitions the change affects (None: it names none)."""

    criteria: tuple[dict[str, Any], ...]
    partitions: int | None


@dataclass(frozen=True)
class MetastoreWork:
    """Everything the home page shows for one metastore and one user."""

    metastore: str
    waiting: list[ChangeRequest]
    facts: dict[int, ApprovalFacts]  # per waiting request
    drafts: list[ChangeRequest]
    rejected: list[ChangeRequest]
    submitted: list[ChangeRequest]  # the user's own, waiting on other people's approvals
    approved: list[ChangeRequest]
    scheduled: list[ChangeRequest]
    running: list[Job]
    executions: list[Execution]


def metastore_work(metastore: Metastore, user: AbstractBaseUser) -> MetastoreWork:
    """The home page's lists for ``metastore`` as ``user`` sees them."""
    mine = _requests(metastore).filter(requester=user)
    waiting = [r for r in inbox(user) if r.metastore == metastore.name][:HOME_LIMIT]
    return MetastoreWork(
        metastore=metastore.name,
        waiting=waiting,
        facts=approval_facts([r.pk for r in waiting]),
        drafts=list(mine.filter(state=ChangeRequestState.DRAFT).order_by("-updated_at")[:HOME_LIMIT]),
        rejected=list(mine.filter(state=ChangeRequestState.REJECTED).order_by("-updated_at")[:HOME_LIMIT]),
        submitted=list(mine.filter(state=ChangeRequestState.SUBMITTED).order_by("submitted_at")[:HOME_LIMIT]),
        approved=list(_requests(metastore).filter(state=ChangeRequestState.APPROVED).order_by("-updated_at")[:HOME_LIMIT]),
        scheduled=list(_requests(metastore).filter(state=ChangeRequestState.SCHEDULED).order_by("scheduled_for")[:HOME_LIMIT]),
        running=list(
            Job.objects.filter(change_request__metastore=metastore.name, state__in=(JobState.QUEUED, JobState.RUNNING))
            .select_related("change_request")
            .order_by("created_at")[:HOME_LIMIT]
        ),
        executions=_with_job_times(
            Execution.objects.filter(metastore=metastore.name).select_related("change_request").order_by("-pk")[:HOME_LIMIT]
        ),
    )  # fmt: skip


def _with_job_times(executions: QuerySet[Execution]) -> list[Execution]:
    """The executions, a data job's with ``job_seconds``: the Spark job that ran it, whose time is what it took (the
    execution itself is only the swap; issue 29: a 2.5-minute job "took 565 ms"); None for the others."""
    jobs = (
        Job.objects.filter(change_request=OuterRef("change_request__pk"), state=JobState.SUCCEEDED)
        .exclude(program="")
        .order_by("-pk")
    )
    found = list(
        executions.annotate(
            job_started=Subquery(jobs.values("started_at")[:1]), job_finished=Subquery(jobs.values("finished_at")[:1])
        )
    )
    for execution in found:
        start, end = getattr(execution, "job_started", None), getattr(execution, "job_finished", None)
        execution.job_seconds = (end - start).total_seconds() if start and end else None
    return found


def approval_facts(ids: list[int]) -> dict[int, ApprovalFacts]:
    """The :class:`ApprovalFacts` of the requests ``ids``, read from their stored previews by key in the database
    (one statement; a preview can be megabytes, and the criteria and counts are a few of its keys)."""
    rows = ChangeRequest.objects.filter(pk__in=ids).values_list(
        "pk", "preview__criteria", "preview__affected__count", "preview__partitions_touched"
    )
    return {
        pk: ApprovalFacts(tuple(criteria or ()), affected if affected is not None else touched)
        for pk, criteria, affected, touched in rows
    }


def partition_anomalies(metastore: Metastore, limit: int = HOME_LIMIT) -> list[Anomaly]:
    """The tables with the most partitions outside the table's root (one grouped statement, ``limit`` rows)."""
    sql, params = anomaly_sql(metastore, limit)
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(sql, params)
        return [Anomaly(database, table, count) for database, table, count in cursor.fetchall()]


def anomaly_sql(metastore: Metastore, limit: int) -> tuple[str, list[int]]:
    """The statement of :func:`partition_anomalies` (also for ``EXPLAIN``)."""
    q = MetastoreSql(metastore.alias)
    sds, part, tbl, db = StorageDescriptor, Partition, Table, Database
    table_root = q.concat(f"ts.{q.col(sds, 'location')}", "'/'")
    length = "CHAR_LENGTH" if connections[metastore.alias].vendor == "mysql" else "LENGTH"  # characters, not bytes
    outside = f"SUBSTR(ps.{q.col(sds, 'location')}, 1, {length}({table_root})) <> {table_root}"
    sql = (
        f"SELECT d.{q.col(db, 'name')}, t.{q.col(tbl, 'name')}, COUNT(*) AS outside "
        f"FROM {q.table(part)} p "
        f"JOIN {q.table(sds)} ps ON ps.{q.col(sds, 'id')} = p.{q.col(part, 'sd')} "
        f"JOIN {q.table(tbl)} t ON t.{q.col(tbl, 'id')} = p.{q.col(part, 'table')} "
        f"JOIN {q.table(sds)} ts ON ts.{q.col(sds, 'id')} = t.{q.col(tbl, 'sd')} "
        f"JOIN {q.table(db)} d ON d.{q.col(db, 'id')} = t.{q.col(tbl, 'database')} "
        f"WHERE ps.{q.col(sds, 'location')} IS NOT NULL AND ts.{q.col(sds, 'location')} IS NOT NULL AND {outside} "
        f"GROUP BY d.{q.col(db, 'name')}, t.{q.col(tbl, 'name')} "
        f"ORDER BY outside DESC, d.{q.col(db, 'name')}, t.{q.col(tbl, 'name')} LIMIT %s"
    )
    return sql, [limit]


def _requests(metastore: Metastore) -> QuerySet[ChangeRequest]:
    """The metastore's requests as Home lists them: without their stored previews (megabytes on a huge table)."""
    return (
        ChangeRequest.objects.filter(metastore=metastore.name)
        .defer("preview")
        .select_related("requester")
        .prefetch_related("approvals")
    )
