"""
Who may do what to a change request, and how many approvals a change needs.

The approval policy comes from ``settings.CATALOG_APPROVAL_POLICY``: rules matched against the preview's risk,
its named risk criteria (``operations.risk.CRITERIA``) and counts; the highest count wins. Approvers can be limited to
databases with ``settings.CATALOG_APPROVER_SCOPES``
(a group name -> database name patterns). Every check returns an :class:`Allowed` with the reason,
so the browser can show why a button is disabled and the API can refuse with the same words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from catalog_admin.errors import ErrorCode
from catalog_admin.roles import Role

__all__ = ("Allowed", "RuleMatch", "approval_requirement", "can_approve", "can_request", "has_role", "rule_matches")

DEFAULT_POLICY = {
    "default": 1,
    "rules": [
        {
            "name": "high risk",
            "criteria": [
                "data_moved",
                "data_copied",
                "data_rewritten",
                "data_deleted",
                "data_swapped_back",
                "table_dropped",
                "partitions_dropped",
                "data_truncated",
                "trash_purged",
                "statistics_dropped",
                "views_broken",
                "columns_removed",
                "many_partitions",
                "transactions_aborted",
                "metastore_merged",
                "database_dropped",
                "grant_option_given",
            ],
            "approvals": 2,
        },
    ],
}


@dataclass(frozen=True)
class RuleMatch:
    """A policy rule that matched a preview, and the labels of the risk criteria that made it match."""

    rule: str
    approvals: int
    criteria: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "approvals": self.approvals, "criteria": list(self.criteria)}


@dataclass(frozen=True)
class Allowed:
    """Whether an action is allowed, and if not, why (and the error code and details a refusal is raised with)."""

    ok: bool
    reason: str = ""
    code: ErrorCode = ErrorCode.PERMISSION_DENIED
    details: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __bool__(self) -> bool:
        return self.ok


def has_role(user: AbstractBaseUser, *roles: Role) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    return user.is_superuser or user.groups.filter(name__in=[str(r) for r in roles]).exists()


def can_request(user: AbstractBaseUser) -> Allowed:
    if has_role(user, Role.STEWARD, Role.ADMIN):
        return Allowed(True)
    return Allowed(False, "Only stewards can request changes.")


def can_approve(user: AbstractBaseUser, *, requester_id: int, databases: Iterable[str]) -> Allowed:
    """Approvers (and admins) may decide on other people's requests, when their scope covers every database the
    change touches (its table's and, for a rename, the destination's)."""
    if not has_role(user, Role.APPROVER, Role.ADMIN):
        return Allowed(False, "Only approvers can approve or reject changes.")
    if user.pk == requester_id:
        return Allowed(False, "Nobody approves their own change (four-eyes rule).", ErrorCode.SELF_APPROVAL_FORBIDDEN)
    patterns = _scope_patterns(user)
    if patterns is not None:
        outside = [name for name in databases if not any(fnmatchcase(name, p) for p in patterns)]
        if outside:
            return Allowed(False, f"Your approval rights do not cover database '{outside[0]}'.")
    return Allowed(True)


def approval_requirement(preview: dict[str, Any]) -> tuple[int, list[str]]:
    """How many approvals a preview needs, and the names of the rules that asked for them."""
    policy = getattr(settings, "CATALOG_APPROVAL_POLICY", DEFAULT_POLICY)
    matches = rule_matches(preview)
    return max([int(policy.get("default", 1)), *(m.approvals for m in matches)]), [m.rule for m in matches]


def rule_matches(preview: dict[str, Any]) -> list[RuleMatch]:
    """The policy's rules that match a preview summary, each with the criteria (labels) that fired for it."""
    policy = getattr(settings, "CATALOG_APPROVAL_POLICY", DEFAULT_POLICY)
    fired = preview.get("criteria") or []
    matches = []
    for rule in policy.get("rules", []):
        if _matches(rule, preview):
            wanted = rule.get("criteria")
            if wanted is None and "risk" in rule:
                labels = [c["label"] for c in fired if c.get("level") in rule["risk"]]
            else:
                labels = [c["label"] for c in fired if c.get("name") in (wanted or ())]
            matches.append(RuleMatch(rule["name"], int(rule["approvals"]), tuple(labels)))
    return matches


def _matches(rule: dict[str, Any], preview: dict[str, Any]) -> bool:
    fired = {c.get("name") for c in preview.get("criteria") or []}
    if "criteria" in rule and not fired.intersection(rule["criteria"]):
        return False
    if "risk" in rule and preview.get("risk") not in rule["risk"]:
        return False
    if "partitions_over" in rule and preview.get("partitions_touched", 0) <= rule["partitions_over"]:
        return False
    if "operations" in rule and preview.get("operation", {}).get("kind") not in rule["operations"]:
        return False
    return not ("statistics_dropped" in rule and preview.get("statistics_dropped", 0) <= 0)


def _scope_patterns(user: AbstractBaseUser) -> list[str] | None:
    """The database patterns the user's scope groups allow, or None when the user is not scoped."""
    scopes: dict[str, list[str]] = getattr(settings, "CATALOG_APPROVER_SCOPES", {})
    groups = set(user.groups.filter(name__in=list(scopes)).values_list("name", flat=True))
    if not groups:
        return None
    return [pattern for group in sorted(groups) for pattern in scopes[group]]
