"""
Template filters of the change-request pages: badges for states and risks, durations, readable values.
(What operations adds to catalog_admin's pages is in ``operations.extensions``.)
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator
from django.utils.timesince import timesince

from operations.choices import ChangeRequestState
from operations.risk import LEVELS
from operations.rules import HIVE, rule_owner

__all__ = (
    "badge_for_risk",
    "badge_for_state",
    "duration_ms",
    "late_minutes",
    "readable",
    "request_badge",
    "request_row",
    "request_state",
    "rule_tag",
    "seconds",
)

register = template.Library()

_COLOUR_BADGES = {"grey": "muted", "blue": "info", "green": "ok", "red": "danger", "purple": "acid", "orange": "warn"}
_RISK_BADGES = dict(zip(LEVELS, ("ok", "warn", "danger"), strict=True))  # by operations.risk.LEVELS, lowest first


@register.filter
def badge_for_state(state: str) -> str:
    """The badge class of a request state (its colour in ``operations.choices``)."""
    return _COLOUR_BADGES.get(ChangeRequestState.colour(state), "muted")


def late_minutes(change: Any, now: datetime | None = None) -> int:
    """Whole minutes a scheduled request is past its time (0 when it is not scheduled, or not late yet)."""
    at = getattr(change, "scheduled_for", None)
    if getattr(change, "state", "") != ChangeRequestState.SCHEDULED or at is None:
        return 0
    return max(0, int(((now or timezone.now()) - at).total_seconds() // 60))


@register.filter
def request_state(change: Any) -> str:
    """A request's state as a steward reads it: a scheduled request past its time says how late it is."""
    late = late_minutes(change)
    if late:
        return f"Late by {late} min"
    return change.get_state_display()


@register.filter
def request_badge(change: Any) -> str:
    """The badge class of a request's state; a late scheduled request is a warning."""
    return "warn" if late_minutes(change) else badge_for_state(change.state)


@register.filter
def badge_for_risk(risk: str) -> str:
    return _RISK_BADGES.get(risk, "muted")


_REQUEST_ROW = (
    '<tr data-request="{pk}">'
    '<td class="num"><a href="{url}"><strong>#{pk}</strong></a></td>'
    '<td class="nowrap"><a href="{url}">{database}.{table}</a><div class="small muted">{metastore}</div></td>'
    '<td class="mono statement-cell" title="{statement}">{short}</td>'
    '<td><span class="badge {state_badge}" data-state="{state}">{state_text}</span></td>'
    '<td><span class="badge {risk_badge}">{risk}</span></td>'
    '<td class="num">{given} / {required}</td>'
    "<td>{requester}</td>"
    '<td class="nowrap">{when}</td>'
    "</tr>"
)


@register.simple_tag
def request_row(change: Any, mode: str) -> SafeString:
    """One row of a change-request list (``mode`` "inbox": since when it waits, else when it was made), escaped by
    ``format_html``. Built here rather than in the template: fifty rows through Django's template engine were most of
    the list's time under load (issue 29)."""
    if mode == "inbox":
        when = f"{timesince(change.submitted_at)} ago" if change.submitted_at else " ago"
    else:
        when = timezone.localtime(change.created_at).strftime("%Y-%m-%d %H:%M")
    return format_html(
        _REQUEST_ROW,
        pk=change.pk,
        url=reverse("operations:detail", args=[change.pk]),
        database=change.database_name,
        table=change.table_name,
        metastore=change.metastore,
        statement=change.statement,
        short=Truncator(change.statement).chars(110),
        state_badge=request_badge(change),
        state=change.state,
        state_text=request_state(change),
        risk_badge=badge_for_risk(change.risk),
        risk=change.risk,
        given=change.approvals_given,
        required=change.required_approvals,
        requester=change.requester.get_username(),
        when=when,
    )


@register.filter
def duration_ms(value: Any) -> str:
    """Milliseconds as ``340 ms`` or ``2.5 s``."""
    if value in (None, ""):
        return "—"
    ms = int(value)
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


@register.filter
def seconds(value: Any) -> str:
    """Estimated seconds as ``0.05 s``, ``12 s`` or ``3 min 20 s``."""
    if value in (None, ""):
        return "—"
    value = float(value)
    if value < 10:
        return f"{value:g} s"
    if value < 120:
        return f"{value:.0f} s"
    return f"{int(value // 60)} min {int(value % 60)} s"


@register.filter
def readable(value: Any) -> str:
    """A preview or audit value for display: ``—`` for nothing, JSON for lists and dicts."""
    if value is None or value == "":
        return "—"
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


@register.filter
def rule_tag(finding: dict[str, Any]) -> SafeString:
    """A finding's rule as a tag naming who enforces it: ``Hive 9.1`` (Hive's own rule, numbered as in
    hive-alter-rules.md) or ``Console · containment`` (the console's safety rule, which Hive does not have)."""
    rule, code = str(finding.get("rule") or ""), str(finding.get("code") or "")
    if rule_owner(rule, code) == HIVE:
        title = f"Hive's own rule {rule}: Hive itself refuses this (or warns of it) too."
        return format_html('<span class="rule rule-hive" title="{}" data-owner="hive">Hive {}</span>', title, rule)
    title = f"The console's safety rule '{rule}': Hive itself would run this change."
    tag = '<span class="rule rule-console" title="{}" data-owner="console">Console · {}</span>'
    return format_html(tag, title, rule)
