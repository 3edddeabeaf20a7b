"""
A merge as a change request on the TARGET metastore: the request's plan is the :class:`MergePreview` and its
fingerprint, so the workflow (submit, four-eyes approval, staleness, execution as a job, revert) treats it as it
treats an ALTER's :class:`operations.preview.Preview`.

The request stores ``operation = {"kind": "merge", <the MergeRequest>}`` instead of an AlterSpec (a merge is not an
ALTER of one table: no ``SPEC_KINDS`` entry, so the notification-event ``_PLANNERS`` and ``spec_from_dict`` never see
it); its revert stores ``{"kind": "merge_revert", "execution": id}``. :class:`MergeChange` and
:class:`MergeRevertChange` give the few attributes the change-request service reads of a plan (``metastore``,
``statement``, ``fingerprint``, ``risk``, ``blockers``, ``as_dict``), and :data:`MERGE_FIELDS` names what
:func:`operations.staleness.compare_plans` compares of two of them. ``operations.merge.changes`` makes them the
``merge`` and ``merge_revert`` change kinds (:mod:`operations.changes`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.merge.plan import MergePreview
from operations.merge.request import LocationRule, MergeRequest, parse_location_rule, parse_rename
from operations.models import Execution, MergeImport
from operations.risk import RiskCriterion, risk_of
from operations.rules import Finding
from operations.staleness import ComparedFields, KeyedField

__all__ = (
    "MERGE",
    "MERGE_FIELDS",
    "MERGE_REVERT",
    "MergeChange",
    "MergeRevertChange",
    "merge_import_of",
    "merge_operation",
    "merge_request_from_dict",
)

MERGE = "merge"
MERGE_REVERT = "merge_revert"
ALL_TABLES = "*"  # a merge is about whole databases: the request's table name


# What staleness compares of a merge's summary besides its blockers: the schemas, the files and bytes its location
# rules copy, per Hive table the rows coming in, and the databases as they arrive
# (``operations.staleness.compare_plans``).
MERGE_FIELDS = ComparedFields(
    scalars=(
        ("source_version", "Source schema"),
        ("target_version", "Target schema"),
        ("data_files", "Files to copy"),
        ("data_bytes", "Bytes to copy"),
    ),
    keyed=(
        KeyedField("tables", "table", "rows", "{} rows"),
        KeyedField("databases", "name", "new_location", "Database {}"),
    ),
)


def merge_operation(request: MergeRequest) -> dict[str, Any]:
    """The operation a merge request stores (what its plan is rebuilt from)."""
    return {"kind": MERGE, **request.as_dict()}


def merge_request_from_dict(data: dict[str, Any]) -> MergeRequest:
    """A :class:`MergeRequest` from ``MergeRequest.as_dict()`` or an API/form payload of the same shape (renames as a
    mapping or ``a=b`` strings, rules as ``{old, new}`` or ``OLD=NEW``); a clear ``invalid_parameter`` error naming
    the field otherwise."""
    for name in ("source", "target"):
        if not isinstance(data.get(name), str) or not data[name].strip():
            raise ApplicationError(ErrorCode.INVALID_PARAMETER, f"Name the {name} metastore.", {"field": name})
    databases = data.get("databases") or []
    if isinstance(databases, str):
        databases = databases.split(",")
    if not isinstance(databases, list | tuple) or not all(isinstance(d, str) for d in databases):
        raise ApplicationError(ErrorCode.INVALID_PARAMETER, "databases is a list of names.", {"field": "databases"})
    return MergeRequest(
        source=data["source"].strip(),
        target=data["target"].strip(),
        databases=tuple(dict.fromkeys(d.strip().lower() for d in databases if d.strip())),
        renames=_renames(data.get("renames") or {}),
        location_rules=_rules(data.get("location_rules") or []),
    )


def _renames(value: Any) -> tuple[tuple[str, str], ...]:
    if isinstance(value, dict):
        value = [f"{old}={new}" for old, new in value.items()]
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ApplicationError(ErrorCode.INVALID_PARAMETER, "renames maps src_db to new_name.", {"field": "renames"})
    return tuple(parse_rename(text) for text in value if text.strip())


def _rules(value: Any) -> tuple[LocationRule, ...]:
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, list | tuple):
        raise ApplicationError(ErrorCode.INVALID_PARAMETER, "location_rules is a list.", {"field": "location_rules"})
    rules = []
    for rule in value:
        if isinstance(rule, dict):
            rule = f"{rule.get('old', '')}={rule.get('new', '')}"
        if not isinstance(rule, str):
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER, "A location rule is OLD=NEW.", {"field": "location_rules"}
            )
        if rule.strip():
            rules.append(parse_location_rule(rule))
    return tuple(rules)


@dataclass(frozen=True)
class MergeChange:
    """A merge preview seen as a change request's plan: on the target metastore, risk high by a named criterion."""

    preview: MergePreview

    @property
    def metastore(self) -> str:
        return self.preview.request.target

    @property
    def database_name(self) -> str:
        return ", ".join(d.new_name for d in self.preview.databases)[:128]

    table_name = ALL_TABLES

    @property
    def statement(self) -> str:
        """The merge in one line, as the request list and the audit log show it (not a Hive statement)."""
        request = self.preview.request
        text = f"MERGE METASTORE {request.source} INTO {request.target}"
        text += f" DATABASES {', '.join(request.databases)}" if request.databases else " (all databases)"
        text += "".join(f" RENAME {old}={new}" for old, new in request.renames)
        text += "".join(f" LOCATION '{r.old}'='{r.new}'" for r in request.location_rules)
        return text

    @property
    def operation(self) -> dict[str, Any]:
        return {**merge_operation(self.preview.request), "arriving": [d.new_name for d in self.preview.databases]}

    @property
    def fingerprint(self) -> str:
        return self.preview.fingerprint

    @cached_property
    def criteria(self) -> tuple[RiskCriterion, ...]:
        partitions = self.preview.rows_of("PARTITIONS")
        why = (
            f"{len(self.preview.databases):,} database(s), {self.preview.rows_of('TBLS'):,} table(s) and "
            f"{partitions:,} partition(s) of '{self.preview.request.source}' appear in '{self.metastore}' at once; "
            "a revert deletes exactly the imported rows."
        )
        return (RiskCriterion("metastore_merged", why),)

    @property
    def risk(self) -> str:
        return risk_of(self.criteria)

    @property
    def blockers(self) -> tuple[Finding, ...]:
        return tuple(Finding(b.code, f"merge:{b.code}", b.message) for b in self.preview.blockers)

    diff: tuple = ()

    def as_dict(self) -> dict[str, Any]:
        """The summary a request stores (what approvers read): the merge preview, its risk and criteria."""
        return {
            "kind": MERGE,
            **self.preview.as_dict(),
            "metastore": self.metastore,
            "statement": self.statement,
            "risk": self.risk,
            "criteria": [c.as_dict() for c in self.criteria],
            "partitions_touched": self.preview.rows_of("PARTITIONS"),
            "blockers": [{**b.as_dict(), "rule": f"merge:{b.code}"} for b in self.preview.blockers],
        }


@dataclass(frozen=True)
class MergeRevertChange:
    """The revert of a merge execution as a change request's plan: ``merge_revert_preview``'s result (h11x's
    ``MergeRevertPreview``) under the original request's target, database names and statement."""

    execution_id: int
    metastore: str
    database_name: str
    original_statement: str
    revert: Any = field(compare=False)  # operations.merge.revert.MergeRevertPreview
    include_hive_rows: bool = False

    table_name = ALL_TABLES
    diff: tuple = ()

    @property
    def statement(self) -> str:
        return f"-- Revert execution #{self.execution_id}: {self.original_statement}"

    @property
    def operation(self) -> dict[str, Any]:
        arriving = [name.strip() for name in self.database_name.split(",") if name.strip()]
        return {
            "kind": MERGE_REVERT,
            "execution": self.execution_id,
            "include_hive_rows": self.include_hive_rows,
            "arriving": arriving,
        }

    @cached_property
    def summary(self) -> dict[str, Any]:
        as_dict = getattr(self.revert, "as_dict", None)
        data = as_dict() if callable(as_dict) else dict(getattr(self.revert, "__dict__", {}))
        return json.loads(json.dumps(data, default=str))

    @property
    def fingerprint(self) -> str:
        found = getattr(self.revert, "fingerprint", None)
        if isinstance(found, str) and found:
            return found
        return hashlib.sha256(json.dumps(self.summary, sort_keys=True).encode()).hexdigest()

    @cached_property
    def criteria(self) -> tuple[RiskCriterion, ...]:
        why = f"The rows execution #{self.execution_id} imported into '{self.metastore}' are deleted."
        return (RiskCriterion("metastore_merged", why),)

    @property
    def risk(self) -> str:
        return risk_of(self.criteria)

    @property
    def blockers(self) -> tuple[Finding, ...]:
        """Refusals the revert preview names (``blockers``: strings, objects with ``message``, or dicts)."""
        found = []
        for blocker in getattr(self.revert, "blockers", ()) or ():
            message = blocker if isinstance(blocker, str) else getattr(blocker, "message", None)
            if message is None and isinstance(blocker, dict):
                message = blocker.get("message")
            found.append(Finding("merge_revert", "merge:revert", str(message or blocker)))
        return tuple(found)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": MERGE_REVERT,
            "revert": self.summary,
            "metastore": self.metastore,
            "statement": self.statement,
            "risk": self.risk,
            "criteria": [c.as_dict() for c in self.criteria],
            "fingerprint": self.fingerprint,
            "blockers": [b.__dict__ for b in self.blockers],
        }


def merge_import_of(execution: Execution) -> MergeImport:
    """The ``MergeImport`` a merge execution recorded (its id ranges are what a revert deletes)."""
    found = MergeImport.objects.filter(execution=execution).first()
    if found is None:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} recorded no merge import: there are no id ranges to revert.",
            {"execution": execution.pk},
        )
    return found
