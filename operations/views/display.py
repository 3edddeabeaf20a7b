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

from catalog_admin.errors import ApplicationError
from operations.choices import OPEN_STATES
from operations.models import ChangeRequest
from operations.policy import approval_requirement
from operations.services.change_requests import change_request_preview

__all__ = (
    "CountRow",
    "DiffRow",
    "Freshness",
    "ItemChange",
    "PreviewDisplay",
    "check_freshness",
    "count_rows",
    "diff_rows",
    "preview_display",
)

FIELD_LABELS = {
    "database": "Database",
    "name": "Table name",
    "type": "Table type",
    "owner": "Owner",
    "location": "Location",
    "input_format": "Input format",
    "output_format": "Output format",
    "serde_lib": "SerDe library",
    "columns": "Columns",
    "partition_keys": "Partition keys",
    "params": "Table parameters",
    "serde_params": "SerDe parameters",
}
COMPARED = (
    ("risk", "Risk"),
    ("partitions_touched", "Partitions touched"),
    ("statistics_moved", "Statistics moved"),
    ("statistics_dropped", "Statistics dropped"),
)


@dataclass(frozen=True)
class ItemChange:
    """One entry of a list-valued field (a parameter, a column) that was added, removed or changed."""

    key: str
    kind: str  # added | removed | changed
    before: str = ""
    after: str = ""


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

    @property
    def blockers(self) -> list[dict[str, Any]]:
        return self.summary.get("blockers") or []

    @property
    def warnings(self) -> list[dict[str, Any]]:
        return self.summary.get("warnings") or []

    @property
    def moves(self) -> list[dict[str, Any]]:
        return self.summary.get("moves") or []

    @property
    def hive(self) -> dict[str, Any]:
        return self.summary.get("hive") or {}

    @property
    def faster_than_hive(self) -> float | None:
        """How many times faster than Hive the console expects to be (None when unknown)."""
        ours, hive = self.summary.get("estimated_seconds"), self.hive.get("estimated_seconds")
        if not ours or not hive:
            return None
        return round(hive / ours, 1)


@dataclass(frozen=True)
class StaleChange:
    """One aspect of the plan that differs between the stored preview and a fresh one."""

    label: str
    previewed: str
    now: str


@dataclass(frozen=True)
class Freshness:
    """Whether a request's preview still describes the table: checked only for open requests."""

    checked: bool = False
    stale: bool = False
    error: str = ""
    changes: tuple[StaleChange, ...] = field(default_factory=tuple)


def preview_display(
    summary: dict[str, Any], *, actual: dict[str, Any] | None = None, policy: dict[str, Any] | None = None
) -> PreviewDisplay:
    """The display of ``summary``; ``actual``: an execution's counts; ``policy``: the request's stored policy."""
    if policy and "approvals" in policy:
        approvals, rules = int(policy["approvals"]), list(policy.get("rules", []))
    else:
        approvals, rules = approval_requirement(summary)
    return PreviewDisplay(
        summary=summary,
        diff=diff_rows(summary.get("diff") or []),
        counts=count_rows(summary.get("row_changes") or [], actual),
        approvals=approvals,
        rules=rules,
        executed=actual is not None,
    )


def diff_rows(diff: list[dict[str, Any]]) -> list[DiffRow]:
    """The preview's ``diff`` entries; parameters and columns become per-entry changes."""
    rows = []
    for entry in diff:
        name, before, after = entry["field"], entry.get("before"), entry.get("after")
        label = FIELD_LABELS.get(name, name.replace("_", " ").capitalize())
        if isinstance(before, list) or isinstance(after, list):
            items, note = _list_changes(before or [], after or [])
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
    """Preview an open request again and say what changed since its stored preview."""
    if request.state not in OPEN_STATES:
        return Freshness()
    try:
        fresh = change_request_preview(request)
    except ApplicationError as exc:
        return Freshness(checked=True, error=exc.message)
    if fresh.fingerprint == request.fingerprint:
        return Freshness(checked=True)
    now = json.loads(json.dumps(fresh.as_dict(), default=str))  # tuples as lists, like the stored preview
    return Freshness(checked=True, stale=True, changes=tuple(_plan_changes(request.preview, now)))


def _list_changes(before: list[Any], after: list[Any]) -> tuple[tuple[ItemChange, ...], str]:
    old, new = _keyed(before), _keyed(after)
    items = [ItemChange(k, "removed", before=v) for k, v in old.items() if k not in new]
    items += [ItemChange(k, "changed", old[k], v) for k, v in new.items() if k in old and old[k] != v]
    items += [ItemChange(k, "added", after=v) for k, v in new.items() if k not in old]
    note = ""
    if [k for k in old if k in new] != [k for k in new if k in old]:
        note = f"Order: {', '.join(old)} → {', '.join(new)}"
    return tuple(items), note


def _keyed(entries: list[Any]) -> dict[str, str]:
    """``[key, value, …]`` entries (parameters, columns, partition keys) as ``key -> readable value``."""
    keyed = {}
    for entry in entries:
        if isinstance(entry, list | tuple) and entry:
            key, rest = str(entry[0]), [part for part in entry[1:] if part not in (None, "")]
            keyed[key] = " · ".join(str(part) for part in rest)
        else:
            keyed[str(entry)] = ""
    return keyed


def _plan_changes(previewed: dict[str, Any], now: dict[str, Any]) -> list[StaleChange]:
    changes = []
    old_diff = {d["field"]: d for d in previewed.get("diff") or []}
    new_diff = {d["field"]: d for d in now.get("diff") or []}
    for name in sorted(set(old_diff) | set(new_diff)):
        old, new = old_diff.get(name), new_diff.get(name)
        if old == new:
            continue
        label = FIELD_LABELS.get(name, name)
        if old and new and isinstance(old.get("before"), list) and isinstance(new.get("before"), list):
            items, _note = _list_changes(old["before"], new["before"])
            if items:  # the table's own entries changed underneath the plan
                changes.append(StaleChange(f"{label} (current table)", "as previewed", _items_text(items)))
            items, _note = _list_changes(old.get("after") or [], new.get("after") or [])
            if items:
                changes.append(StaleChange(f"{label} (after the change)", "as previewed", _items_text(items)))
        else:
            changes.append(StaleChange(label, _arrow(old), _arrow(new)))
    old_counts, new_counts = _counts_text(previewed), _counts_text(now)
    for table in sorted(set(old_counts) | set(new_counts)):
        if old_counts.get(table) != new_counts.get(table):
            changes.append(StaleChange(f"Rows of {table}", old_counts.get(table, "—"), new_counts.get(table, "—")))
    for key, label in COMPARED:
        if previewed.get(key) != now.get(key):
            changes.append(StaleChange(label, str(previewed.get(key, "—")), str(now.get(key, "—"))))
    for key, label in (("blockers", "Blockers"), ("warnings", "Warnings"), ("moves", "Directory moves")):
        if (previewed.get(key) or []) != (now.get(key) or []):
            changes.append(StaleChange(label, _findings(previewed.get(key)), _findings(now.get(key))))
    return changes


def _items_text(items: tuple[ItemChange, ...]) -> str:
    marks = {"added": "+", "removed": "−", "changed": "~"}
    return "; ".join(
        f"{marks[i.kind]} {i.key}"
        + (f" = {i.after}" if i.kind == "added" else f": {i.before} → {i.after}" if i.kind == "changed" else "")
        for i in items
    )


def _arrow(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "unchanged"
    return f"{_short(entry.get('before'))} → {_short(entry.get('after'))}"


def _short(value: Any) -> str:
    text = "—" if value is None else str(value)
    return text if len(text) <= 160 else text[:157] + "…"


def _counts_text(summary: dict[str, Any]) -> dict[str, str]:
    return {
        r["table"]: f"+{r.get('inserted', 0)} ~{r.get('updated', 0)} −{r.get('deleted', 0)}"
        for r in summary.get("row_changes") or []
    }


def _findings(entries: list[dict[str, Any]] | None) -> str:
    if not entries:
        return "none"
    return "; ".join(
        f"rule {e['rule']}: {e['message']}" if "rule" in e else f"{e.get('source')} → {e.get('destination')}"
        for e in entries
    )
