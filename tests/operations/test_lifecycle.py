"""
The change-request lifecycle (``operations.lifecycle``): one set of checks that the services enforce and the pages
and the API explain, in the same words with the same code; every state change through it and audited (the
scheduler's start and an admin's settling of a stuck request included); scopes over every database a plan touches;
refresh that keeps an unchanged approval; the rules "stays on its metastore" and "``at`` in the future" in one place.

Everything runs on the PostgreSQL 3.1 metastore with metadata-only changes; jobs are left queued for a worker
(``CATALOG_JOBS_MODE = "tasks"``) unless a test runs one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from html import unescape
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import Table, TableParam, TransactionComponent, TransactionWriteId
from catalog_admin.selectors.metastores import Metastore
from operations import lifecycle
from operations.ddl.parser import parse_alter
from operations.models import AuditRecord, ChangeRequest, Job
from operations.selectors import change_request_actions, inbox
from operations.services.audit import verify_audit_chain
from operations.services.change_requests import (
    change_request_approve,
    change_request_cancel,
    change_request_create,
    change_request_execute,
    change_request_refresh,
    change_request_submit,
    change_request_update,
    settle_stuck_request,
)
from operations.services.due_requests import start_due_requests
from operations.services.jobs import run_job
from tests.fixtures.factories import api_key

ALIAS = "hive31_pg"
pytestmark = [pytest.mark.django_db, pytest.mark.parametrize("metastore_alias", [ALIAS], indirect=True)]

PROPERTIES = "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='crm')"
CROSS_DATABASE = "ALTER TABLE marketing.campaigns RENAME TO ops.campaigns_archive"


@pytest.fixture(autouse=True)
def queued_jobs(settings) -> None:
    """Jobs wait for a worker; mail goes to the in-memory outbox; one approval for every change."""
    settings.CATALOG_JOBS_MODE = "tasks"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.CATALOG_APPROVAL_POLICY = {"default": 1, "rules": []}


def make_user(name: str, *roles: str) -> User:
    account = User.objects.create_user(name, f"{name}@example.com", "not-a-secret-1")
    account.groups.add(*(Group.objects.get_or_create(name=role)[0] for role in roles))
    return account


@pytest.fixture
def people(metastore: Metastore) -> dict[str, User]:
    return {
        "viewer": make_user("viewer", "viewer"),
        "steward": make_user("steward", "steward"),
        "steward2": make_user("steward2", "steward"),
        "approver": make_user("approver", "approver"),
        "approver2": make_user("approver2", "approver"),
        "admin": make_user("admin", "admin"),
    }


def draft(people: dict[str, User], statement: str = PROPERTIES, who: str = "steward") -> ChangeRequest:
    return change_request_create(user=people[who], metastore=ALIAS, spec=parse_alter(statement), reason="lifecycle")


def submitted(people: dict[str, User], statement: str = PROPERTIES) -> ChangeRequest:
    return change_request_submit(request=draft(people, statement), user=people["steward"])


def approved(people: dict[str, User], statement: str = PROPERTIES) -> ChangeRequest:
    change = change_request_approve(request=submitted(people, statement), user=people["approver"])
    assert change.state == "approved"
    return change


def executing(people: dict[str, User], *, silent_for: timedelta | None = None) -> ChangeRequest:
    """Executing, its job claimed by a worker that last beat ``silent_for`` ago (``None``: still queued)."""
    change = change_request_execute(request=approved(people), user=people["steward"])
    if silent_for is not None:
        beat = timezone.now() - silent_for
        Job.objects.filter(change_request=change).update(state="running", started_at=beat, heartbeat_at=beat)
    return change


def api(user: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
    return client


def browser(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def touch_customers(metastore: Metastore) -> None:
    """A Hive client changes the table after the preview."""
    table = Table.objects.on(metastore).get(database__name="sales", name="customers")
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).create(table=table, key="changed_by_hive", value="1")


def audit_of(change: ChangeRequest) -> list[tuple[str, str, str]]:
    return list(
        AuditRecord.objects.filter(request_id_ref=change.pk).order_by("id").values_list("actor", "action", "outcome")
    )


# UI and API refuse in the same words ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """One refused action: who, on which request, and how each channel takes it."""

    actor: str
    subject: Callable[[dict[str, User]], ChangeRequest]
    action: str  # the page's action name (its reason-<action> when the page shows the button)
    api: Callable[[APIClient, ChangeRequest], Any]
    page: Callable[[Client, ChangeRequest], Any]
    code: str


def _api_post(action: str, body: dict[str, Any] | None = None) -> Callable[[APIClient, ChangeRequest], Any]:
    return lambda client, change: client.post(
        reverse(f"operations_api:change-request-{action}", kwargs={"pk": change.pk}), body or {}, format="json"
    )


def _page_post(name: str, body: dict[str, Any] | None = None) -> Callable[[Client, ChangeRequest], Any]:
    return lambda client, change: client.post(reverse(f"operations:{name}", kwargs={"pk": change.pk}), body or {})


def _api_patch(body: dict[str, Any]) -> Callable[[APIClient, ChangeRequest], Any]:
    return lambda client, change: client.patch(
        reverse("operations_api:change-request-detail", kwargs={"pk": change.pk}), body, format="json"
    )


EDIT_FORM = {"metastore": ALIAS, "statement": PROPERTIES.replace("crm", "growth"), "reason": "edited"}
PAST = "2020-01-01T00:00"

REFUSALS = {
    "edit a submitted request": Refusal(
        "steward", submitted, "edit", _api_patch({"reason": "late"}), _page_post("edit", EDIT_FORM), "invalid_state"
    ),
    "edit another's draft": Refusal(
        "steward2", draft, "edit", _api_patch({"reason": "mine"}), _page_post("edit", EDIT_FORM), "permission_denied"
    ),
    "move a draft to another metastore": Refusal(
        "steward",
        draft,
        "edit",
        _api_patch({"metastore": "hive40_pg"}),
        _page_post("edit", {**EDIT_FORM, "metastore": "hive40_pg"}),
        "invalid_parameter",
    ),
    "submit another's draft": Refusal(
        "steward2", draft, "submit", _api_post("submit"), _page_post("submit"), "permission_denied"
    ),
    "submit twice": Refusal("steward", submitted, "submit", _api_post("submit"), _page_post("submit"), "invalid_state"),
    "refresh another's request": Refusal(
        "approver", submitted, "refresh", _api_post("refresh"), _page_post("refresh"), "permission_denied"
    ),
    "refresh while executing": Refusal(
        "steward", executing, "refresh", _api_post("refresh"), _page_post("refresh"), "invalid_state"
    ),
    "approve a draft": Refusal(
        "approver", draft, "approve", _api_post("approve"), _page_post("approve"), "invalid_state"
    ),
    "approve as a viewer": Refusal(
        "viewer", submitted, "approve", _api_post("approve"), _page_post("approve"), "permission_denied"
    ),
    "approve one's own": Refusal(
        "steward", submitted, "approve", _api_post("approve"), _page_post("approve"), "permission_denied"
    ),
    "reject a draft": Refusal(
        "approver",
        draft,
        "reject",
        _api_post("reject", {"comment": "no"}),
        _page_post("reject", {"comment": "no"}),
        "invalid_state",
    ),  # fmt: skip
    "execute before approval": Refusal(
        "steward", submitted, "execute", _api_post("execute"), _page_post("execute", {"confirm": "on"}), "invalid_state"
    ),
    "execute another's as an approver": Refusal(
        "approver",
        approved,
        "execute",
        _api_post("execute"),
        _page_post("execute", {"confirm": "on"}),
        "permission_denied",
    ),  # fmt: skip
    "schedule in the past": Refusal(
        "steward",
        approved,
        "schedule",
        _api_post("execute", {"at": f"{PAST}Z"}),
        _page_post("schedule", {"confirm": "on", "at": PAST}),
        "invalid_parameter",
    ),  # fmt: skip
    "cancel another's": Refusal(
        "steward2", submitted, "cancel", _api_post("cancel"), _page_post("cancel"), "permission_denied"
    ),
    "cancel while executing": Refusal(
        "steward", executing, "cancel", _api_post("cancel"), _page_post("cancel"), "invalid_state"
    ),
    "revert a draft": Refusal("steward", draft, "revert", _api_post("revert"), _page_post("revert"), "invalid_state"),
    "settle as a steward": Refusal(
        "steward",
        lambda people: executing(people, silent_for=timedelta(hours=1)),
        "settle",
        _api_post("settle", {"outcome": "failed", "reason": "gone"}),
        _page_post("settle", {"outcome": "failed", "reason": "gone"}),
        "permission_denied",
    ),  # fmt: skip
    "settle a job that is alive": Refusal(
        "admin",
        lambda people: executing(people, silent_for=timedelta(seconds=5)),
        "settle",
        _api_post("settle", {"outcome": "failed", "reason": "gone"}),
        _page_post("settle", {"outcome": "failed", "reason": "gone"}),
        "invalid_state",
    ),  # fmt: skip
}


def page_refusal(client: Client, response: Any) -> tuple[int, str]:
    """The browser's refusal: a flash message after the redirect, or the confirmation/edit form's error."""
    if response.status_code == 302:
        page = client.get(response["Location"])
        errors = [str(m) for m in page.context["messages"] if m.level_tag == "error"]
        assert errors, "the page did not refuse"
        return 302, errors[0]
    return response.status_code, " ".join(response.context["form"].non_field_errors())


def page_reason(client: Client, change: ChangeRequest, action: str) -> str | None:
    """The reason the request page shows next to the disabled button, when it shows the button."""
    content = client.get(reverse("operations:detail", args=[change.pk])).content.decode()
    match = re.search(rf'id="reason-{action}">([^<]*)<', content)
    return unescape(match.group(1)) if match else None


# Moving a draft to another metastore needs a second one: not in the quick tier.
NEEDS_TWO_METASTORES = {"move a draft to another metastore"}


@pytest.mark.parametrize(
    "case",
    [pytest.param(case, marks=pytest.mark.matrix) if case in NEEDS_TWO_METASTORES else case for case in REFUSALS],
)
def test_the_page_and_the_api_refuse_with_the_same_code_and_words(
    metastore: Metastore, people: dict[str, User], case: str
) -> None:
    """Every refusal: the API's code and message, the page's message (and the disabled button's reason, where the
    page shows one) are the same, and they are the lifecycle's (what the services enforce)."""
    refusal = REFUSALS[case]
    actor = people[refusal.actor]

    # given: the same situation for each channel
    via_api, via_page = refusal.subject(people), refusal.subject(people)
    explained = page_reason(browser(actor), via_page, refusal.action)

    # when
    answer = refusal.api(api(actor), via_api)
    client = browser(actor)
    status, page_message = page_refusal(client, refusal.page(client, via_page))

    # then
    body = answer.json()
    assert body["code"] == refusal.code, body
    assert answer.status_code == ErrorCode(refusal.code).http_status
    same = re.sub(r"#\d+", "#<pk>", body["message"])
    assert re.sub(r"#\d+", "#<pk>", page_message) == same
    assert status in (302, answer.status_code)
    if explained is not None:
        assert re.sub(r"#\d+", "#<pk>", explained) == same
    if refusal.code in ("invalid_state", "permission_denied"):  # a refusal of the lifecycle itself
        via_api.refresh_from_db()
        allowed = change_request_actions(via_api, actor)[refusal.action]
        assert (allowed.ok, str(allowed.code), allowed.reason) == (False, refusal.code, body["message"])


def test_editing_in_the_wrong_state_says_edited_everywhere(metastore: Metastore, people: dict[str, User]) -> None:
    """One wording: "cannot be edited now", never "cannot be changed (edit) now"."""
    # given
    change = submitted(people)

    # when
    with pytest.raises(ApplicationError) as error:
        change_request_update(request=change, user=people["steward"], spec=None, reason="late")

    # then
    expected = f"Request #{change.pk} is waiting for approval: it cannot be edited now."
    assert (error.value.code, error.value.message) == (ErrorCode.INVALID_STATE, expected)
    assert error.value.details == {"request": change.pk, "state": "submitted", "action": "edit"}
    assert change_request_actions(change, people["steward"])["edit"].reason == expected


# Refresh -------------------------------------------------------------------------------------------------------------


def test_a_draft_is_refreshed_through_the_api_as_in_the_browser(metastore: Metastore, people: dict[str, User]) -> None:
    """Refreshing a draft re-previews it and leaves it a draft, on both channels."""
    # given
    through_api, through_page = draft(people), draft(people)
    touch_customers(metastore)

    # when
    answer = api(people["steward"]).post(reverse("operations_api:change-request-refresh", args=[through_api.pk]))
    page = browser(people["steward"]).post(reverse("operations:refresh", args=[through_page.pk]), follow=True)

    # then
    assert answer.status_code == 200, answer.content
    assert answer.json()["state"] == "draft"
    assert answer.json()["fingerprint"] != through_api.fingerprint
    assert f"The preview of draft #{through_page.pk} was refreshed." in page.content.decode()
    through_page.refresh_from_db()
    assert (through_page.state, through_page.fingerprint) == ("draft", answer.json()["fingerprint"])


def test_refreshing_an_unchanged_approved_request_keeps_it_approved(
    metastore: Metastore, people: dict[str, User]
) -> None:
    """Nothing changed: still approved, its approval still counted, and it can be executed."""
    # given
    change = approved(people)

    # when
    refreshed = change_request_refresh(request=change, user=people["steward"])

    # then
    assert (refreshed.state, refreshed.approvals_given, refreshed.fingerprint) == ("approved", 1, change.fingerprint)
    assert audit_of(change)[-1] == ("steward", "refresh", "unchanged")
    assert change_request_execute(request=refreshed, user=people["steward"]).state == "executing"


def test_refreshing_a_changed_approved_request_asks_for_approval_again(
    metastore: Metastore, people: dict[str, User]
) -> None:
    """The preview changed: back to submitted, the old approval lapses, and the same approver can approve again."""
    # given
    change = approved(people)
    touch_customers(metastore)

    # when
    refreshed = change_request_refresh(request=change, user=people["steward"])
    lapsed = (refreshed.state, refreshed.approvals_given)
    again = change_request_approve(request=refreshed, user=people["approver"], comment="checked the new preview")

    # then
    assert lapsed == ("submitted", 0)
    assert refreshed.fingerprint != change.fingerprint
    assert (again.state, again.approvals_given) == ("approved", 1)
    assert [a for _actor, a, _o in audit_of(change)][-2:] == ["refresh", "approve"]


# One home for the metastore and the time rules -----------------------------------------------------------------------


def test_a_request_stays_on_its_metastore_in_the_service(metastore: Metastore, people: dict[str, User]) -> None:
    """The service refuses another metastore (the page and the API only relay it)."""
    change = draft(people)

    with pytest.raises(ApplicationError) as error:
        change_request_update(request=change, user=people["steward"], spec=None, reason=None, metastore="hive40_pg")

    assert error.value.code == ErrorCode.INVALID_PARAMETER
    assert error.value.message == "A request stays on its metastore; cancel it and start a new one instead."
    assert error.value.details == {"parameter": "metastore"}


def test_a_past_time_is_refused_not_run_now(metastore: Metastore, people: dict[str, User]) -> None:
    """``at`` in the past is an error in the service, not an execution started at once."""
    change = approved(people)

    with pytest.raises(ApplicationError) as error:
        change_request_execute(request=change, user=people["steward"], at=timezone.now() - timedelta(minutes=1))

    assert (error.value.code, error.value.details) == (ErrorCode.INVALID_PARAMETER, {"parameter": "at"})
    change.refresh_from_db()
    assert change.state == "approved" and not Job.objects.filter(change_request=change).exists()


# The scheduler -------------------------------------------------------------------------------------------------------


def test_the_scheduler_starts_a_due_request_through_the_lifecycle_with_an_audit_record(
    metastore: Metastore, people: dict[str, User]
) -> None:
    """scheduled -> executing is a transition like the others: audited (the chain still verifies), with its job;
    a request not yet due is left alone."""
    # given
    due = change_request_execute(request=approved(people), user=people["steward"], at=timezone.now() + timedelta(1))
    later = change_request_execute(request=approved(people), user=people["steward"], at=timezone.now() + timedelta(1))
    ChangeRequest.objects.filter(pk=due.pk).update(scheduled_for=timezone.now() - timedelta(seconds=1))

    # when
    started = start_due_requests()

    # then
    due.refresh_from_db()
    later.refresh_from_db()
    assert started == 1
    assert (due.state, later.state) == ("executing", "scheduled")
    job = Job.objects.get(change_request=due)
    assert job.state == "queued" and job.message == "Queued by its schedule"
    assert audit_of(due)[-1] == ("scheduler", "start", "executing")
    assert AuditRecord.objects.filter(request_id_ref=due.pk, action="start").get().details["job"] == job.pk
    assert verify_audit_chain() == []
    assert not lifecycle.can_start(later)


def test_a_running_job_beats_and_a_finished_one_is_not_alive(
    metastore: Metastore, people: dict[str, User], warehouse
) -> None:
    """The job's claim and progress set ``heartbeat_at``; once done it no longer counts as alive."""
    # given
    change = executing(people)
    job = Job.objects.get(change_request=change)
    assert job.heartbeat_at is None and lifecycle.job_is_alive(job)

    # when
    run_job(job.pk)

    # then
    job.refresh_from_db()
    assert job.state == "succeeded" and job.attempts == 1
    assert job.heartbeat_at is not None and job.heartbeat_at >= job.started_at
    assert not lifecycle.job_is_alive(job)


# Stuck requests ------------------------------------------------------------------------------------------------------


def test_an_admin_settles_a_request_whose_job_died_through_the_api(
    metastore: Metastore, people: dict[str, User], settings
) -> None:
    """A job silent for longer than the heartbeat timeout is dead: an admin ends the request as failed, with its
    job, audited with the reason; cancel stays refused (the request is executing)."""
    # given
    settings.CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS = 60
    change = executing(people, silent_for=timedelta(minutes=2))
    admin = api(people["admin"])
    path = reverse("operations_api:change-request-settle", args=[change.pk])

    # when
    cancel = api(people["steward"]).post(reverse("operations_api:change-request-cancel", args=[change.pk]))
    no_reason = admin.post(path, {"outcome": "failed"}, format="json")
    settled = admin.post(path, {"outcome": "failed", "reason": "worker host lost; nothing committed"}, format="json")

    # then
    assert cancel.status_code == 409 and cancel.json()["message"].endswith("is executing: it cannot be cancelled now.")
    assert no_reason.status_code == 400 and no_reason.json()["details"] == {"field": "reason"}
    assert settled.status_code == 200, settled.content
    assert settled.json()["state"] == "failed"
    assert settled.json()["error"] == "Settled as failed: worker host lost; nothing committed"
    job = Job.objects.get(change_request=change)
    assert job.state == "failed" and job.finished_at is not None
    record = AuditRecord.objects.filter(request_id_ref=change.pk).latest("id")
    assert (record.actor, record.action, record.outcome) == ("admin", "settle", "failed")
    assert record.details["reason"] == "worker host lost; nothing committed"
    assert verify_audit_chain() == []


def test_an_admin_settles_a_stuck_request_from_its_page(
    metastore: Metastore, people: dict[str, User], settings
) -> None:
    """The page offers "Mark failed" / "Mark succeeded" to an admin once the job is dead, and disables them (with
    the reason) while it is alive."""
    # given
    settings.CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS = 60
    alive = executing(people, silent_for=timedelta(seconds=5))
    dead = executing(people, silent_for=timedelta(minutes=5))
    client = browser(people["admin"])

    # when
    alive_page = client.get(reverse("operations:detail", args=[alive.pk])).content.decode()
    dead_page = client.get(reverse("operations:detail", args=[dead.pk])).content.decode()
    settled = client.post(
        reverse("operations:settle", args=[dead.pk]), {"outcome": "succeeded", "reason": "HMS shows it"}, follow=True
    )

    # then
    assert 'id="reason-settle">' in alive_page and "is still executing" in alive_page
    assert 'id="action-settle-failed"' in dead_page and 'id="reason-settle"' not in dead_page
    assert f"Request #{dead.pk} was settled as succeeded." in settled.content.decode()
    dead.refresh_from_db()
    assert dead.state == "succeeded"
    assert Job.objects.get(change_request=dead).state == "succeeded"


def test_reconcile_can_settle_a_stuck_request_as_the_system(metastore: Metastore, people: dict[str, User]) -> None:
    """``settle_stuck_request(request, None, …)`` (for ``reconcile_executions``): audited as reconcile; a request
    that is not executing is refused with invalid_state, and an unknown outcome with invalid_parameter."""
    # given
    change = executing(people, silent_for=timedelta(hours=1))
    Job.objects.filter(change_request=change).update(state="failed")  # the worker crashed after recording it

    # when
    settled = settle_stuck_request(change, None, "failed", "no commit marker in the metastore")

    # then
    assert settled.state == "failed"
    assert audit_of(change)[-1] == ("system:reconcile_executions", "settle", "failed")
    with pytest.raises(ApplicationError) as again:
        settle_stuck_request(settled, None, "failed", "twice")
    assert again.value.code == ErrorCode.INVALID_STATE
    other = executing(people, silent_for=timedelta(hours=1))
    with pytest.raises(ApplicationError) as unknown:
        settle_stuck_request(other, None, "maybe", "unsure")
    assert unknown.value.code == ErrorCode.INVALID_PARAMETER


def test_a_queued_job_older_than_the_timeout_is_dead_and_can_be_settled(
    metastore: Metastore, people: dict[str, User], settings
) -> None:
    """No worker ever picked the job up: once it waited longer than the timeout the request can be settled, and a
    worker that comes later does not run it."""
    # given
    settings.CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS = 60
    change = executing(people)
    Job.objects.filter(change_request=change).update(created_at=timezone.now() - timedelta(minutes=5))

    # when
    settled = settle_stuck_request(change, people["admin"], "failed", "no worker ran it")
    ran = run_job(Job.objects.get(change_request=change).pk)

    # then
    assert settled.state == "failed"
    assert ran.state == "failed" and ran.started_at is None


# Scopes --------------------------------------------------------------------------------------------------------------


def test_an_approver_needs_scope_over_every_database_the_plan_touches(
    metastore: Metastore, people: dict[str, User], settings
) -> None:
    """RENAME marketing.campaigns TO ops.x touches marketing and ops: an approver scoped to marketing alone can
    neither approve it nor see it in the inbox; one scoped to both can."""
    # given
    settings.CATALOG_APPROVER_SCOPES = {"marketing-approvers": ["marketing"], "ops-approvers": ["ops"]}
    marketing_only = make_user("marketing_only", "approver", "marketing-approvers")
    both = make_user("both", "approver", "marketing-approvers", "ops-approvers")
    change = submitted(people, CROSS_DATABASE)
    assert lifecycle.databases_touched(change) == ("marketing", "ops")

    # when
    with pytest.raises(ApplicationError) as refused:
        change_request_approve(request=change, user=marketing_only)
    decided = change_request_approve(request=change, user=both)

    # then
    assert refused.value.code == ErrorCode.PERMISSION_DENIED
    assert refused.value.message == "Your approval rights do not cover database 'ops'."
    assert change_request_actions(change, marketing_only)["approve"].reason == refused.value.message
    assert decided.state == "approved"


def test_the_inbox_leaves_out_plans_partly_outside_the_scope(
    metastore: Metastore, people: dict[str, User], settings
) -> None:
    """The inbox asks the same scope check as approval."""
    settings.CATALOG_APPROVER_SCOPES = {"marketing-approvers": ["marketing"]}
    marketing_only = make_user("marketing_only", "approver", "marketing-approvers")
    cross = submitted(people, CROSS_DATABASE)
    inside = submitted(people, "ALTER TABLE marketing.campaigns SET TBLPROPERTIES ('team'='growth')")

    assert [r.pk for r in inbox(marketing_only)] == [inside.pk]
    assert {r.pk for r in inbox(people["approver"])} == {cross.pk, inside.pk}  # unscoped: everything


def test_an_abort_needs_scope_over_every_database_its_transactions_wrote_to(
    metastore: Metastore, people: dict[str, User], settings
) -> None:
    """The transaction aborted on ops.job_runs_acid also wrote sales.orders (TXN_COMPONENTS) and was given a write id
    on marketing.clicks (TXN_TO_WRITE_ID): the plan names all three databases, and an approver scoped to ops alone
    can neither approve it nor see it in the inbox."""
    # given
    settings.CATALOG_APPROVER_SCOPES = {"ops-approvers": ["ops"], "all-approvers": ["ops", "sales", "marketing"]}
    ops_only = make_user("ops_only", "approver", "ops-approvers")
    everywhere = make_user("everywhere", "approver", "all-approvers")
    running = TransactionComponent.objects.using(metastore.alias).filter(database="ops").values("txn_id")[0]["txn_id"]
    with allow_metastore_writes():
        TransactionComponent.objects.using(metastore.alias).create(
            txn_id=running, database="sales", table="orders", partition="dt=2024-01-02/hour=0", operation_type="i"
        )
        TransactionWriteId.objects.using(metastore.alias).create(
            txn_id=running, database="marketing", table="clicks", write_id=1
        )

    # when
    change = submitted(people, f"ALTER TABLE ops.job_runs_acid ABORT TRANSACTIONS {running}")
    with pytest.raises(ApplicationError) as refused:
        change_request_approve(request=change, user=ops_only)
    waiting = inbox(ops_only)
    decided = change_request_approve(request=change, user=everywhere)

    # then
    assert change.preview["databases"] == ["marketing", "ops", "sales"]
    assert lifecycle.databases_touched(change) == ("marketing", "ops", "sales")
    assert refused.value.code == ErrorCode.PERMISSION_DENIED
    assert refused.value.message == "Your approval rights do not cover database 'marketing'."
    assert change.pk not in [r.pk for r in waiting]
    assert decided.state == "approved"


def test_a_cancelled_request_cannot_be_cancelled_again_in_the_lifecycle_words(
    metastore: Metastore, people: dict[str, User]
) -> None:
    """A refusal after a race (the guarded update found another state) uses the lifecycle's wording."""
    change = draft(people)
    change_request_cancel(request=change, user=people["steward"])

    with pytest.raises(ApplicationError) as error:
        change_request_cancel(request=change, user=people["steward"])

    assert error.value.message == f"Request #{change.pk} is cancelled: it cannot be cancelled now."
    assert error.value.details == {"request": change.pk, "state": "cancelled", "action": "cancel"}


def test_the_api_explains_each_action_as_the_page_does(metastore: Metastore, people: dict[str, User]) -> None:
    """The request's ``actions`` in the API are the lifecycle's checks: allowed or not as the page's buttons, with
    the page's reasons, and the code a refusal answers with."""
    # given
    change = submitted(people)

    for name in ("viewer", "steward", "approver", "admin"):
        # when
        explained = api(people[name]).get(reverse("operations_api:change-request-detail", args=[change.pk]))
        page = browser(people[name]).get(reverse("operations:detail", args=[change.pk])).content.decode()

        # then
        actions = explained.json()["actions"]
        assert set(actions) == set(lifecycle.ACTIONS)
        for action in ("approve", "execute", "cancel", "schedule"):
            reason = page_reason_in(page, action)
            assert actions[action]["reason"] == (reason or ""), (name, action)
            assert actions[action]["allowed"] is (reason is None), (name, action)
    steward = api(people["steward"]).get(reverse("operations_api:change-request-detail", args=[change.pk])).json()
    assert steward["actions"]["approve"] == {
        "allowed": False,
        "reason": "Only approvers can approve or reject changes.",
        "code": "permission_denied",
    }
    assert steward["actions"]["execute"]["code"] == "invalid_state"


def page_reason_in(content: str, action: str) -> str | None:
    match = re.search(rf'id="reason-{action}">([^<]*)<', content)
    return unescape(match.group(1)) if match else None
