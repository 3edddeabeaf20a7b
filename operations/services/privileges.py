"""
Preview, execute and revert access-control statements (GRANT/REVOKE, CREATE/DROP ROLE, GRANT/REVOKE ROLE; issue 28).

``privilege_execute`` runs exactly a plan of :mod:`operations.planners.privileges`, as ``alter_execute`` runs an
ALTER: the plan rebuilt just before must be the approved one and unblocked; in ONE metastore transaction it is built
again and must still be that plan (the rows it read unchanged), ids come from SEQUENCE_TABLE
(``catalog_admin.ids.reserve_ids``), every statement must change exactly one row, and the execution's commit marker
is written with them. The execution keeps every row it inserted, deleted or updated (``before_image["applied"]``), so
its revert — a grant's revoke, a revoke's grant — puts back exactly those rows, with the same ids. No notification
event is written: Hive writes none for grants and roles.
"""

from __future__ import annotations

import time
from typing import Any

from django.db import connections, transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.ids import DATANUCLEUS_CLASSES, SEQUENCE_PREFIX, reserve_ids
from catalog_admin.selectors.metastores import Metastore, get_metastore
from operations.models import Execution
from operations.planners.privileges import (
    ID_COLUMNS,
    NOW,
    PRIVILEGE_FIELDS,
    PrivilegePlan,
    RowChange,
    plan_privileges,
    plan_restore,
)
from operations.privilege_specs import PRIVILEGE_REVERT_KIND, PrivilegeSpec
from operations.services.commit_markers import new_commit_marker, write_commit_marker
from operations.services.one_transaction import refuse_unexecutable, run_execution
from operations.staleness import compare_plans, stale_message, stale_preview_error

__all__ = ("inverse_spec", "privilege_execute", "privilege_plan", "privilege_revert_plan")

_INVERSE = {
    "grant": "revoke",
    "revoke": "grant",
    "create_role": "drop_role",
    "drop_role": "create_role",
    "grant_role": "revoke_role",
    "revoke_role": "grant_role",
}


def privilege_plan(metastore: str | None, spec: PrivilegeSpec, *, grantor: str) -> PrivilegePlan:
    """The plan of ``spec`` on ``metastore`` (the default when ``None``) run by ``grantor``, built now."""
    return plan_privileges(get_metastore(metastore), spec, grantor=grantor)


def inverse_spec(spec: PrivilegeSpec) -> PrivilegeSpec:
    """The statement undoing ``spec`` (what a revert shows): a grant's revoke, a role's drop, …"""
    return PrivilegeSpec(
        _INVERSE[spec.action],
        spec.privileges,
        spec.database,
        spec.table,
        spec.principals,
        spec.roles,
        spec.option,
        spec.columns,
    )


def privilege_revert_plan(execution: Execution, *, grantor: str) -> PrivilegePlan:
    """The plan putting back exactly the rows ``execution`` changed; refused, naming why, when it did not succeed."""
    if execution.state not in (Execution.State.SUCCEEDED, Execution.State.RECONCILED):
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"Execution #{execution.pk} is {execution.state}: only a successful execution can be reverted.",
            {"execution": execution.pk},
        )
    applied = (execution.before_image or {}).get("applied")
    if applied is None:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} recorded no rows to put back.",
            {"execution": execution.pk},
        )
    spec = PrivilegeSpec.from_dict(execution.preview["operation"])
    return plan_restore(
        get_metastore(execution.metastore),
        inverse_spec(spec),
        grantor=grantor,
        execution_id=execution.pk,
        applied=applied,
        original=execution.statement,
    )


def privilege_execute(
    plan: PrivilegePlan, *, actor: str, source: str, reason: str = "", approved: dict[str, Any] | None = None
) -> Execution:
    """Run exactly ``plan`` (or nothing), audit it, and return the execution record."""
    refuse_unexecutable(plan, approved, compared=PRIVILEGE_FIELDS, subject="The grants")
    metastore = get_metastore(plan.metastore)
    execution = _start(plan, actor=actor, source=source, reason=reason)
    return run_execution(execution, plan, metastore, lambda: _counts(_apply(metastore, plan, execution)))


def _start(plan: PrivilegePlan, *, actor: str, source: str, reason: str) -> Execution:
    operation = (
        plan.spec.as_dict() if plan.reverts is None else {"kind": PRIVILEGE_REVERT_KIND, "execution": plan.reverts}
    )
    return Execution.objects.create(
        metastore=plan.metastore,
        database_name=plan.database_name,
        table_name=plan.table_name,
        statement=plan.statement,
        operation=operation,
        preview=plan.as_dict(),
        fingerprint=plan.fingerprint,
        actor=actor,
        source=source,
        reason=reason,
        expected_counts=plan.counts(),
        reverts_id=plan.reverts,
        commit_marker=new_commit_marker(),
    )


def _rebuild(metastore: Metastore, plan: PrivilegePlan) -> PrivilegePlan:
    if plan.reverts is None:
        return plan_privileges(metastore, plan.spec, grantor=plan.grantor)
    return privilege_revert_plan(Execution.objects.get(pk=plan.reverts), grantor=plan.grantor)


def _apply(metastore: Metastore, plan: PrivilegePlan, execution: Execution) -> list[dict[str, Any]]:
    with allow_metastore_writes(), transaction.atomic(using=metastore.alias):
        now = _rebuild(metastore, plan)
        staleness = compare_plans(plan, now, PRIVILEGE_FIELDS)
        if staleness.is_stale:
            message = stale_message(
                "The grants", "preview it again before executing", since="the preview", staleness=staleness
            )
            raise stale_preview_error(message, staleness)
        write_commit_marker(metastore, execution.commit_marker, execution.pk)
        ids = _new_ids(metastore, plan.changes)
        seconds = int(time.time())  # ObjectStore: (int) (System.currentTimeMillis() / 1000)
        applied = [_run(metastore, change, ids.get(index), seconds) for index, change in enumerate(plan.changes)]
        execution.before_image = {"applied": applied}
        execution.save(update_fields=["before_image"])
    return applied


def _new_ids(metastore: Metastore, changes: tuple[RowChange, ...]) -> dict[int, int]:
    """An id from SEQUENCE_TABLE for every new row (by its index in ``changes``), one block per table."""
    wanted: dict[str, list[int]] = {}
    for index, change in enumerate(changes):
        if change.action == "insert" and change.row_id is None:
            wanted.setdefault(change.table, []).append(index)
    ids: dict[int, int] = {}
    for table, indexes in sorted(wanted.items()):
        sequence = SEQUENCE_PREFIX + DATANUCLEUS_CLASSES[table]
        first = reserve_ids(metastore.alias, table, ID_COLUMNS[table], sequence, len(indexes))
        ids.update({index: first + k for k, index in enumerate(indexes)})
    return ids


def _run(metastore: Metastore, change: RowChange, new_id: int | None, seconds: int) -> dict[str, Any]:
    """Run one row change (exactly one row, or the transaction fails) and return it as executed; ``new_id``: the id
    reserved for a new row."""
    quote = connections[metastore.alias].ops.quote_name
    id_column = ID_COLUMNS[change.table]
    values = {name: seconds if value == NOW else value for name, value in change.values}
    record: dict[str, Any] = {"table": change.table, "action": change.action, "label": change.label}
    with connections[metastore.alias].cursor() as cursor:
        if change.action == "insert":
            row_id = change.row_id if change.row_id is not None else new_id
            row = {**values, id_column: row_id}
            names = sorted(row)
            cursor.execute(
                f"INSERT INTO {quote(change.table)} ({', '.join(quote(n) for n in names)}) "
                f"VALUES ({', '.join(['%s'] * len(names))})",
                [row[n] for n in names],
            )
            record.update(row_id=row_id, values=row)
        elif change.action == "delete":
            cursor.execute(f"DELETE FROM {quote(change.table)} WHERE {quote(id_column)} = %s", [change.row_id])
            record.update(row_id=change.row_id, values=dict(change.values))
        else:
            names = sorted(values)
            cursor.execute(
                f"SELECT {', '.join(quote(n) for n in names)} FROM {quote(change.table)} WHERE {quote(id_column)} = %s",
                [change.row_id],
            )
            before = dict(zip(names, cursor.fetchone() or (), strict=False))
            assignments = ", ".join(f"{quote(n)} = %s" for n in names)
            cursor.execute(
                f"UPDATE {quote(change.table)} SET {assignments} WHERE {quote(id_column)} = %s",
                [*(values[n] for n in names), change.row_id],
            )
            record.update(row_id=change.row_id, values=values, before=before)
        if cursor.rowcount != 1:
            raise ApplicationError(
                ErrorCode.STALE_PREVIEW,
                f"{change.action} of {change.table} {change.label} changed {cursor.rowcount} rows, the preview "
                "expected 1; nothing was applied.",
                {"table": change.table, "expected": 1, "actual": cursor.rowcount},
            )
    return record


def _counts(applied: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for item in applied:
        counts.setdefault(item["table"], {"insert": 0, "update": 0, "delete": 0})[item["action"]] += 1
    return counts
