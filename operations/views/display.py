"""
What the change-request pages show of a preview: its diff made readable, its counts next to an execution's,
the approvals its policy asks for, and whether the table changed since it was made.

A preview is the JSON summary ``Preview.as_dict()`` (stored on the request, or fresh from the live form), so the
live preview, the request page and the confirmation page render the very same data with one partial.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.choices import OPEN_STATES
from operations.models import ChangeRequest
from operations.policy import RuleMatch, approval_requirement, rule_matches
from operations.rules import CONSOLE, HIVE, rule_owner
from operations.services.change_requests import change_request_plan_holds, change_request_staleness
from operations.staleness import FIELD_LABELS, ItemChange, StaleChange, list_changes

__all__ = (
    "CountRow",
    "DiffRow",
    "Freshness",
    "ItemChange",
    "PreviewDisplay",
    "check_freshness",
    "count_rows",
    "diff_rows",
    "freshness_from_error",
    "preview_display",
)


@dataclass(frozen=True)
class DiffRow:
    """One field of the table that the change modifies; list-valued fields list their changed entries."""

    field: str
    label: str
    before: Any
    after: Any
    items: tuple[ItemChange, ...] = ()
    note: str = ""

    @property
    def is_list(self) -> bool:
        return isinstance(self.before, list) or isinstance(self.after, list)


@dataclass(frozen=True)
class CountRow:
    """Rows of one metastore table: what the preview expected, and what execution changed (if it ran)."""

    table: str
    previewed: tuple[int, int, int] | None
    actual: tuple[int, int, int] | None = None

    @property
    def matches(self) -> bool:
        return self.actual is None or self.previewed is None or self.previewed == self.actual


@dataclass(frozen=True)
class PreviewDisplay:
    """A preview summary with its readable diff, its counts and the approvals its policy asks for."""

    summary: dict[str, Any]
    diff: list[DiffRow]
    counts: list[CountRow]
    approvals: int
    rules: list[str]
    executed: bool = False
    matched: tuple[RuleMatch, ...] = ()

    @property
    def criteria(self) -> list[dict[str, Any]]:
        """The risk criteria that fired (name, level, label, explanation)."""
        return self.summary.get("criteria") or []

    @property
    def blockers(self) -> list[dict[str, Any]]:
        return self.summary.get("blockers") or []

    @property
    def refused_by(self) -> tuple[str, ...]:
        """Who refuses the change: ``hive`` (Hive's own rules), ``console`` (its safety rules), or both, Hive first."""
        owners = {rule_owner(str(b.get("rule") or ""), str(b.get("code") or "")) for b in self.blockers}
        return tuple(owner for owner in (HIVE, CONSOLE) if owner in owners)

    @property
    def blockers_more(self) -> list[tuple[str, int, int, int]]:
        """``(code, listed, not listed, total)`` for each kind of blocker the stored preview lists only the first of."""
        return _more(self.blockers, self.summary.get("blocker_counts"))

    @property
    def warnings(self) -> list[dict[str, Any]]:
        return self.summary.get("warnings") or []

    @property
    def warnings_more(self) -> list[tuple[str, int, int, int]]:
        return _more(self.warnings, self.summary.get("warning_counts"))

    @property
    def moves(self) -> list[dict[str, Any]]:
        return self.summary.get("moves") or []

    @property
    def hive(self) -> dict[str, Any]:
        return self.summary.get("hive") or {}

    @property
    def data_copy(self) -> dict[str, Any] | None:
        """What a data job copies (relocate): its size and basis, the small-file histogram, the duration's basis."""
        return self.summary.get("data_copy")

    @property
    def file_sizes(self) -> list[tuple[str, int, int, int]]:
        """The histogram's rows ``(size bucket, files, bytes)`` for the table beside the chart."""
        chart = ((self.data_copy or {}).get("scope") or {}).get("file_sizes") or {}
        series = chart.get("series") or {}
        return list(zip(chart.get("labels") or [], series.get("files") or [], series.get("bytes") or [], strict=False))

    @property
    def hive_comparable(self) -> bool:
        """Whether Hive can do the same work, so that its estimate compares with the console's (not a relocation)."""
        return bool(self.hive.get("comparable", True))

    @property
    def faster_than_hive(self) -> float | None:
        """How many times faster than Hive the console expects to be (None when unknown)."""
        ours, hive = self.summary.get("estimated_seconds"), self.hive.get("estimated_seconds")
        if not ours or not hive or not self.hive_comparable:
            return None
        return round(hive / ours, 1)


@dataclass(frozen=True)
class Freshness:
    """Whether a request's preview still describes the table: checked only for open requests."""

    checked: bool = False
    stale: bool = False
    error: str = ""
    changes: tuple[StaleChange, ...] = field(default_factory=tuple)


def _more(listed: list[dict[str, Any]], counts: dict[str, int] | None) -> list[tuple[str, int, int, int]]:
    shown: dict[str, int] = {}
    for finding in listed:
        shown[finding.get("code", "")] = shown.get(finding.get("code", ""), 0) + 1
    return [
        (code, shown.get(code, 0), total - shown.get(code, 0), total)
        for code, total in (counts or {}).items()
        if total > shown.get(code, 0)
    ]


def preview_display(
    summary: dict[str, Any], *, actual: dict[str, Any] | None = None, policy: dict[str, Any] | None = None
) -> PreviewDisplay:
    """The display of ``summary``; ``actual``: an execution's counts; ``policy``: the request's stored policy."""
    summary = _as_stored(summary)
    if policy and "approvals" in policy:
        approvals, rules = int(policy["approvals"]), list(policy.get("rules", []))
        matched = tuple(RuleMatch(m["rule"], m["approvals"], tuple(m["criteria"])) for m in policy.get("matched", []))
    else:
        (approvals, rules), matched = approval_requirement(summary), tuple(rule_matches(summary))
    return PreviewDisplay(
        summary=summary,
        matched=matched,
        diff=diff_rows(summary.get("diff") or []),
        counts=count_rows(summary.get("row_changes") or [], actual),
        approvals=approvals,
        rules=rules,
        executed=actual is not None,
    )


def _as_stored(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary as a request stores it (JSON: tuples become lists), so a live preview reads like a saved one."""
    return json.loads(json.dumps(summary, default=str))


def diff_rows(diff: list[dict[str, Any]]) -> list[DiffRow]:
    """The preview's ``diff`` entries; parameters and columns become per-entry changes."""
    rows = []
    for entry in diff:
        name, before, after = entry["field"], entry.get("before"), entry.get("after")
        label = FIELD_LABELS.get(name, name.replace("_", " ").capitalize())
        if isinstance(before, list) or isinstance(after, list):
            items, note = list_changes(before or [], after or [])
            rows.append(DiffRow(name, label, before, after, items, note))
        else:
            rows.append(DiffRow(name, label, before, after))
    return rows


def count_rows(row_changes: list[dict[str, Any]], actual: dict[str, Any] | None = None) -> list[CountRow]:
    """Expected (inserted, updated, deleted) per metastore table, with the actual counts when executed."""
    previewed = {r["table"]: (r.get("inserted", 0), r.get("updated", 0), r.get("deleted", 0)) for r in row_changes}
    done = {table: (c.get("insert", 0), c.get("update", 0), c.get("delete", 0)) for table, c in (actual or {}).items()}
    tables = sorted(set(previewed) | set(done))
    return [
        CountRow(table, previewed.get(table), done.get(table, (0, 0, 0)) if actual is not None else None)
        for table in tables
    ]


def check_freshness(request: ChangeRequest) -> Freshness:
    """Whether an open request's stored plan still holds: the table's state fingerprint compared with the plan's (a
    few queries); only when it differs is the plan rebuilt (one preview), to say what changed."""
    if request.state not in OPEN_STATES:
        return Freshness()
    try:
        if change_request_plan_holds(request):
            return Freshness(checked=True)
        staleness = change_request_staleness(request)
    except ApplicationError as exc:
        return Freshness(checked=True, error=exc.message)
    return Freshness(checked=True, stale=staleness.is_stale, changes=staleness.changes)


def freshness_from_error(error: ApplicationError) -> Freshness | None:
    """The freshness a refused action reported (``stale_preview`` names what changed); ``None`` for other errors."""
    if error.code != ErrorCode.STALE_PREVIEW:
        return None
    changes = tuple(StaleChange(**change) for change in error.details.get("changed") or [])
    return Freshness(checked=True, stale=True, changes=changes)
