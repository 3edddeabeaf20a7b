"""
What changed between an approved plan and the same plan rebuilt now: one pure comparison.

An approval binds the plan's fingerprint (:attr:`operations.preview.Preview.fingerprint`): every statement with its
parameters and expected rows, every directory move, the partitions in scope and the table's rows. When the rebuilt
plan's fingerprint differs, :func:`compare_plans` says what differs in words a steward reads. The service (approval,
execution), the job and the request page all use it; nothing here reads a database.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from catalog_admin.errors import ApplicationError, ErrorCode

__all__ = (
    "ALTER_FIELDS",
    "FIELD_LABELS",
    "ComparedFields",
    "ItemChange",
    "KeyedField",
    "StaleChange",
    "Staleness",
    "compare_plans",
    "list_changes",
    "stale_message",
    "stale_preview_error",
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


@dataclass(frozen=True)
class KeyedField:
    """A list-valued summary field compared entry by entry: ``field``'s entries keyed by ``key``, their ``value``
    compared; each changed entry is named ``label.format(key)``."""

    field: str
    key: str
    value: str
    label: str


@dataclass(frozen=True)
class ComparedFields:
    """The summary fields a kind declares for staleness, besides what every plan may carry (a table's diff, rows per
    metastore table, directory moves, partitions in scope, statements, blockers): ``scalars`` as ``(field, label)``,
    ``keyed`` list fields (:class:`KeyedField`)."""

    scalars: tuple[tuple[str, str], ...] = ()
    keyed: tuple[KeyedField, ...] = ()


ALTER_FIELDS = ComparedFields(
    scalars=(
        ("risk", "Risk"),
        ("partitions_touched", "Partitions touched"),
        ("statistics_moved", "Statistics moved"),
        ("statistics_dropped", "Statistics dropped"),
    )
)


class _Summarized(Protocol):
    @property
    def fingerprint(self) -> str: ...

    def as_dict(self) -> dict[str, Any]: ...


Plan = Mapping[str, Any] | _Summarized


@dataclass(frozen=True)
class ItemChange:
    """One entry of a list-valued field (a parameter, a column) that was added, removed or changed."""

    key: str
    kind: str  # added | removed | changed
    before: str = ""
    after: str = ""


@dataclass(frozen=True)
class StaleChange:
    """One aspect of the plan that differs between the approved plan and the rebuilt one."""

    label: str
    previewed: str
    now: str


@dataclass(frozen=True)
class Staleness:
    """Whether the rebuilt plan is another plan than the approved one, and what differs."""

    is_stale: bool
    changes: tuple[StaleChange, ...] = ()
    previewed_fingerprint: str = ""
    current_fingerprint: str = ""

    @property
    def summary(self) -> str:
        """The changed aspects in one line (for messages)."""
        return ", ".join(dict.fromkeys(change.label for change in self.changes)) or "partitions or statistics"

    def as_details(self) -> dict[str, Any]:
        return {
            "changed": [asdict(change) for change in self.changes],
            "previewed_fingerprint": self.previewed_fingerprint,
            "current_fingerprint": self.current_fingerprint,
        }


def compare_plans(approved: Plan, current: Plan, compared: ComparedFields = ALTER_FIELDS) -> Staleness:
    """Compare the approved plan (a plan, or its stored summary with its fingerprint) with ``current``; ``compared``:
    the summary fields the plan's kind declares (an ALTER's by default)."""
    old, new = _summary(approved), _summary(current)
    if old.get("fingerprint") == new.get("fingerprint"):
        return Staleness(False, (), old.get("fingerprint", ""), new.get("fingerprint", ""))
    changes = (
        _diff_changes(old, new)
        + _count_changes(old, new)
        + _declared_changes(old, new, compared)
        + _move_changes(old, new)
        + _scope_changes(old.get("scope"), new.get("scope"))
        + _statement_changes(old.get("steps") or [], new.get("steps") or [])
        + _blocker_changes(old, new)
    )
    return Staleness(True, tuple(changes), old.get("fingerprint", ""), new.get("fingerprint", ""))


def stale_message(
    subject: str, then: str, *, since: str = "the approved preview", staleness: Staleness | None = None
) -> str:
    """The words of every "plan is stale" refusal: ``subject`` changed since ``since`` (what changed); ``then``."""
    what = f" ({staleness.summary})" if staleness is not None else ""
    return f"{subject} changed since {since}{what}; {then}."


def stale_preview_error(message: str, staleness: Staleness, **details: Any) -> ApplicationError:
    """The ``stale_preview`` refusal (words from :func:`stale_message`); its details name what changed
    (``changed``) and both fingerprints."""
    return ApplicationError(ErrorCode.STALE_PREVIEW, message, {**staleness.as_details(), **details})


def list_changes(before: list[Any], after: list[Any]) -> tuple[tuple[ItemChange, ...], str]:
    """Entries of ``[key, value, …]`` lists removed, changed and added, and a note when their order changed."""
    old, new = _keyed(before), _keyed(after)
    items = [ItemChange(k, "removed", before=v) for k, v in old.items() if k not in new]
    items += [ItemChange(k, "changed", old[k], v) for k, v in new.items() if k in old and old[k] != v]
    items += [ItemChange(k, "added", after=v) for k, v in new.items() if k not in old]
    note = ""
    if [k for k in old if k in new] != [k for k in new if k in old]:
        note = f"Order: {', '.join(old)} → {', '.join(new)}"
    return tuple(items), note


def _summary(plan: Plan) -> dict[str, Any]:
    if isinstance(plan, Mapping):
        return dict(plan)
    summary = json.loads(json.dumps(plan.as_dict(), default=str))  # tuples as lists, like a stored summary
    return {**summary, "fingerprint": plan.fingerprint}


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


def _diff_changes(old: dict[str, Any], new: dict[str, Any]) -> list[StaleChange]:
    changes = []
    old_diff = {d["field"]: d for d in old.get("diff") or []}
    new_diff = {d["field"]: d for d in new.get("diff") or []}
    for name in sorted(set(old_diff) | set(new_diff)):
        before, after = old_diff.get(name), new_diff.get(name)
        if before == after:
            continue
        label = FIELD_LABELS.get(name, name)
        if before and after and isinstance(before.get("before"), list) and isinstance(after.get("before"), list):
            items, _note = list_changes(before["before"], after["before"])
            if items:  # the table's own entries changed underneath the plan
                changes.append(StaleChange(f"{label} (current table)", "as previewed", _items_text(items)))
            items, _note = list_changes(before.get("after") or [], after.get("after") or [])
            if items:
                changes.append(StaleChange(f"{label} (after the change)", "as previewed", _items_text(items)))
        else:
            changes.append(StaleChange(label, _arrow(before), _arrow(after)))
    return changes


def _count_changes(old: dict[str, Any], new: dict[str, Any]) -> list[StaleChange]:
    changes = []
    old_counts, new_counts = _counts_text(old), _counts_text(new)
    for table in sorted(set(old_counts) | set(new_counts)):
        if old_counts.get(table) != new_counts.get(table):
            changes.append(StaleChange(f"Rows of {table}", old_counts.get(table, "—"), new_counts.get(table, "—")))
    return changes


def _declared_changes(old: dict[str, Any], new: dict[str, Any], compared: ComparedFields) -> list[StaleChange]:
    """The kind's declared fields: each scalar that differs, each keyed entry that came, went or changed."""
    changes = [
        StaleChange(label, str(old.get(key, "—")), str(new.get(key, "—")))
        for key, label in compared.scalars
        if old.get(key) != new.get(key)
    ]
    for keyed in compared.keyed:
        before = {item[keyed.key]: item.get(keyed.value) for item in old.get(keyed.field) or []}
        after = {item[keyed.key]: item.get(keyed.value) for item in new.get(keyed.field) or []}
        changes += [
            StaleChange(keyed.label.format(key), str(before.get(key, "—")), str(after.get(key, "—")))
            for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)
        ]
    return changes


def _move_changes(old: dict[str, Any], new: dict[str, Any]) -> list[StaleChange]:
    """Moves that are no longer planned and moves that are new (a partition pointed elsewhere, for one)."""
    before = [_move_text(m) for m in old.get("moves") or []]
    after = [_move_text(m) for m in new.get("moves") or []]
    gone, added = [m for m in before if m not in after], [m for m in after if m not in before]
    if not gone and not added:
        return []
    return [StaleChange("Directory moves", "; ".join(gone) or "none", "; ".join(added) or "none")]


def _scope_changes(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[StaleChange]:
    """The partitions in scope: each one whose location or storage descriptor changed, or that came or went."""
    if (old or {}).get("digest") == (new or {}).get("digest"):
        return []
    before = {p["name"]: p for p in (old or {}).get("partitions") or []}
    after = {p["name"]: p for p in (new or {}).get("partitions") or []}
    changes = []
    for name in sorted(set(before) | set(after)):
        was, now = before.get(name), after.get(name)
        if was is None or now is None:
            changes.append(StaleChange(f"Partition {name}", _presence(was), _presence(now)))
            continue
        if was.get("location") != now.get("location"):
            label = f"Location of partition {name}"
            changes.append(StaleChange(label, _short(was["location"]), _short(now["location"])))
        if was.get("sd_id") != now.get("sd_id"):
            label = f"Storage descriptor of partition {name}"
            changes.append(StaleChange(label, str(was["sd_id"]), str(now["sd_id"])))
    if not changes:
        changes.append(
            StaleChange(
                "Partitions in scope",
                f"{(old or {}).get('count', 0)} as previewed",
                f"{(new or {}).get('count', 0)}, names or locations changed",
            )
        )
    return changes


def _blocker_changes(old: dict[str, Any], new: dict[str, Any]) -> list[StaleChange]:
    """Blockers by code: each code whose count changed; other blockers under the same counts (the digest)."""
    before, after = _blocker_counts(old), _blocker_counts(new)
    changes = [
        StaleChange(f"Blockers {code}", f"{before.get(code, 0):,}", f"{after.get(code, 0):,}")
        for code in dict.fromkeys([*before, *after])
        if before.get(code, 0) != after.get(code, 0)
    ]
    digests = old.get("blockers_digest"), new.get("blockers_digest")
    if not changes and None not in digests and digests[0] != digests[1]:
        changes.append(StaleChange("Blockers", "as previewed", "other blockers, the same number of each kind"))
    if not changes and None in digests:  # a summary without a digest lists every blocker: compare what they name
        was, now = _blocker_names(old), _blocker_names(new)
        if was != now:
            changes.append(StaleChange("Blockers", ", ".join(sorted(was)), ", ".join(sorted(now))))
    return changes


def _blocker_names(summary: dict[str, Any]) -> set[str]:
    return {str(b.get("subject") or b.get("message")) for b in summary.get("blockers") or []}


def _blocker_counts(summary: dict[str, Any]) -> dict[str, int]:
    """Every blocker code's total (a summary stored before the counts existed: its listed blockers)."""
    if "blocker_counts" in summary:
        return dict(summary["blocker_counts"])
    counts: dict[str, int] = {}
    for blocker in summary.get("blockers") or []:
        counts[blocker.get("code", "")] = counts.get(blocker.get("code", ""), 0) + 1
    return counts


def _presence(partition: dict[str, Any] | None) -> str:
    return "present" if partition else "absent"


def _statement_changes(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[StaleChange]:
    """Statements added, removed or changed (text, parameters or expected rows)."""
    if len(old) != len(new):
        return [StaleChange("Statements", f"{len(old)} statements", f"{len(new)} statements")]
    changes = []
    for number, (was, now) in enumerate(zip(old, new, strict=True), start=1):
        same_digest = "digest" not in was or "digest" not in now or was["digest"] == now["digest"]
        if same_digest and _step_text(was) == _step_text(now):
            continue
        previewed, current = _step_text(was), _step_text(now)
        if previewed == current:
            previewed, current = previewed + " (as previewed)", current + " (other values)"
        changes.append(StaleChange(f"Statement {number}", previewed, current))
    return changes


def _step_text(step: dict[str, Any]) -> str:
    return f"{step.get('description')}: {step.get('action')} {step.get('expected_rows')} {step.get('table')} rows"


def _move_text(move: dict[str, Any]) -> str:
    return f"{move.get('source')} → {move.get('destination')}"


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
