"""What a kind of change provides (:class:`ChangeKind`) and what its plan looks like to the services (:class:`Plan`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from operations.staleness import ALTER_FIELDS, ComparedFields, Staleness, compare_plans

if TYPE_CHECKING:
    from operations.models import ChangeRequest, Execution
    from operations.rules import Finding

__all__ = ("ChangeKind", "Plan", "Subject")


class Plan(Protocol):
    """A frozen plan as the services read it: where it runs, its statement, what approval binds, why it is risky,
    what refuses it, and the summary a request stores (what approvers read)."""

    @property
    def metastore(self) -> str: ...

    @property
    def statement(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...

    @property
    def risk(self) -> str: ...

    @property
    def blockers(self) -> tuple[Finding, ...]: ...

    @property
    def diff(self) -> Any: ...  # (field, before, after) of the one table it changes; empty for a merge

    def as_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Subject:
    """What a request on a plan is about: its database and table (as lists show them), the operation it stores (what
    the kind rebuilds the plan from) and every database it touches besides (the approvers' scopes)."""

    database_name: str
    table_name: str
    operation: dict[str, Any]
    databases: tuple[str, ...] = field(default=())


class ChangeKind(ABC):
    """One kind of change. ``operation_kinds``: the ``operation["kind"]`` values it handles (the registry's keys).

    ``compared``: the summary fields staleness compares (:func:`operations.staleness.compare_plans`). The templates
    render its stored summary on the request page (``plan_template``, with ``change`` and ``pv``/``m``) and its
    subject in the page's header (``subject_template``); ``on_one_table``: it changes one table (the page shows that
    table's preview and links)."""

    name: ClassVar[str]
    operation_kinds: ClassVar[tuple[str, ...]]
    compared: ClassVar[ComparedFields] = ALTER_FIELDS
    plan_template: ClassVar[str] = "operations/inc/preview.html"
    subject_template: ClassVar[str] = "operations/inc/subject_table.html"
    on_one_table: ClassVar[bool] = True

    @abstractmethod
    def preview(self, metastore: str | None, operation: Mapping[str, Any]) -> Plan:
        """The plan of a new ``operation`` on ``metastore`` (the kind's default when ``None``), built now."""

    @abstractmethod
    def plan(self, request: ChangeRequest) -> Plan:
        """The request's plan rebuilt now (a revert request's from the execution it reverts)."""

    def replan(self, request: ChangeRequest, operation: Mapping[str, Any] | None) -> Plan:
        """The plan of a draft edited to ``operation`` (``None``: the same); a kind that cannot take another
        operation refuses naming why."""
        return self.plan(request) if operation is None else self.preview(request.metastore, operation)

    @abstractmethod
    def subject(self, plan: Plan) -> Subject:
        """What a request on ``plan`` is about (:class:`Subject`)."""

    def request_rule(self, user: Any, operation: Mapping[str, Any]) -> Any | None:
        """Who may request ``operation`` (an ``operations.policy.Allowed``); ``None``: the default rule (stewards)."""
        return None

    def state_fingerprint(self, request: ChangeRequest) -> str | None:
        """A cheap digest of what the request's plan was built from, as it is now, comparable with the stored plan's
        ``state_fingerprint`` (``None``: the kind has none, or it cannot be read; the plan is rebuilt instead)."""
        return None

    def staleness(self, approved: Mapping[str, Any], plan: Plan) -> Staleness:
        """What differs between the approved plan (a stored summary with its fingerprint) and ``plan``, rebuilt now."""
        return compare_plans(approved, plan, self.compared)

    @abstractmethod
    def revert_plan(self, execution: Execution) -> Plan:
        """The plan undoing ``execution`` (one this kind ran); refused, naming why, when it cannot be undone."""

    @abstractmethod
    def job_kind(self, request: ChangeRequest) -> str:
        """The kind of the job that executes the approved ``request`` (``operations.choices.JobKind``: ``alter``,
        ``relocate``, ``compact``, ``convert``, ``analyze``, ``database``, ``privilege``, ``merge``,
        ``merge_revert``)."""
