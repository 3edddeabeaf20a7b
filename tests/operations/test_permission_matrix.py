"""
Who may do what to a change request, as one table, proved through both channels: the REST API (a token of each
role, none for anonymous) and the browser pages (a session of each role, POSTs to the page URLs).

``MATRIX`` is the single source of truth: for every action and every role, the outcome both channels must give.
The API's answer carries its error code; the browser's refusal must show the very same words as the API (the
services refuse, both channels only relay). A refused action writes nothing but its own ``refused`` audit record
(requests, approvals, comments, jobs, executions, the other audit records, idempotency keys and the table's metastore
parameters are compared before and after); an allowed one has its effect.

"Own" requests: the actor is the requester. A viewer or an approver cannot request, so their own requests are ones
they made while they were stewards: the rights on one's own request follow the request (its requester), not one's
current role, while approving follows the role and never covers one's own request.

Everything runs on the PostgreSQL 3.1 metastore with a metadata-only change (one approval). Jobs are left queued
(``CATALOG_JOBS_MODE = "tasks"``): an allowed execution answers "executing" and nothing touches the metastore.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from catalog_admin.models import TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.models import (
    Approval,
    AuditRecord,
    ChangeRequest,
    Comment,
    Execution,
    IdempotencyKey,
    Job,
)
from operations.policy import can_request
from operations.services.change_requests import (
    change_request_approve,
    change_request_cancel,
    change_request_create,
    change_request_execute,
    change_request_reject,
    change_request_submit,
)
from operations.services.jobs import run_job
from tests.fixtures.factories import api_key, make_user

ALIAS = "hive31_pg"
ON_HIVE31_PG = pytest.mark.parametrize("metastore_alias", [ALIAS], indirect=True)

PROPERTIES = "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='crm')"  # metadata only: one approval
EDITED = "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='growth')"

# Outcomes ------------------------------------------------------------------------------------------------------------

OK = "ok"  # API 2xx; browser: the action's success (redirect with a success message, or the page)
AUTH = "auth"  # API 401 not_authenticated; browser: redirect to the sign-in page
DENIED = "denied"  # 403 permission_denied
SELF = "self"  # 403 self_approval_forbidden (four eyes)
STATE = "state"  # 409 invalid_state
METHOD = "method"  # 405: there is no such write
REFUSALS = {DENIED: (403, "permission_denied"), SELF: (403, "self_approval_forbidden"), STATE: (409, "invalid_state")}

ROLES = ("anonymous", "viewer", "steward", "approver", "admin")

# fmt: off
MATRIX: dict[str, tuple[str, str, str, str, str]] = {
    #                                anonymous viewer  steward approver admin
    "create":                       (AUTH,     DENIED, OK,     DENIED,  OK),
    "edit own draft":               (AUTH,     OK,     OK,     OK,      OK),
    "edit other's draft":           (AUTH,     DENIED, DENIED, DENIED,  DENIED),
    "submit own draft":             (AUTH,     OK,     OK,     OK,      OK),
    "submit other's draft":         (AUTH,     DENIED, DENIED, DENIED,  DENIED),
    "approve own":                  (AUTH,     DENIED, DENIED, SELF,    SELF),
    "approve other's":              (AUTH,     DENIED, DENIED, OK,      OK),
    "reject own":                   (AUTH,     DENIED, DENIED, SELF,    SELF),
    "reject other's":               (AUTH,     DENIED, DENIED, OK,      OK),
    "execute unapproved":           (AUTH,     STATE,  STATE,  STATE,   STATE),
    "execute approved, requester":  (AUTH,     OK,     OK,     OK,      OK),
    "execute approved, other's":    (AUTH,     DENIED, DENIED, DENIED,  OK),
    "cancel own":                   (AUTH,     OK,     OK,     OK,      OK),
    "cancel other's":               (AUTH,     DENIED, DENIED, DENIED,  DENIED),
    "revert":                       (AUTH,     DENIED, OK,     DENIED,  OK),
    "comment":                      (AUTH,     OK,     OK,     OK,      OK),
    "read audit":                   (AUTH,     OK,     OK,     OK,      OK),
    "write audit":                  (AUTH,     METHOD, METHOD, METHOD,  METHOD),
}
# fmt: on

CASES = [(action, role, outcomes[ROLES.index(role)]) for action, outcomes in MATRIX.items() for role in ROLES]


# People and requests -------------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def queued_jobs(settings) -> None:
    """Jobs stay queued (a worker would run them): an allowed execution only moves the request to executing."""
    settings.CATALOG_JOBS_MODE = "tasks"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


@pytest.fixture
def people(metastore: Metastore) -> dict[str, User]:
    """One user per role (the admin is only an admin), another steward who owns "other's" requests, and a checker
    (an approver) who approves requests while they are set up."""
    return {
        "viewer": make_user("viewer", "viewer"),
        "steward": make_user("steward", "steward"),
        "approver": make_user("approver", "approver"),
        "admin": make_user("admin", "admin"),
        "owner": make_user("owner", "steward"),
        "checker": make_user("checker", "approver"),
    }


def requested_by(user: User, people: dict[str, User] | None = None) -> ChangeRequest:
    """A draft of ``user``; a viewer or an approver made it while they were a steward."""
    steward = Group.objects.get_or_create(name="steward")[0]
    promoted = not can_request(user)
    if promoted:
        user.groups.add(steward)
    try:
        return change_request_create(user=user, metastore=ALIAS, spec=parse_alter(PROPERTIES), reason="matrix")
    finally:
        if promoted:
            user.groups.remove(steward)


def submitted_by(user: User, people: dict[str, User] | None = None) -> ChangeRequest:
    return change_request_submit(request=requested_by(user), user=user)


def approved_for(user: User, people: dict[str, User]) -> ChangeRequest:
    """Submitted by ``user`` and approved by the checker."""
    change = change_request_approve(request=submitted_by(user), user=people["checker"])
    assert change.state == "approved"
    return change


def succeeded_for(user: User, people: dict[str, User]) -> ChangeRequest:
    """Approved, executed and done: its job ran the change (inside the test's rolled-back transaction)."""
    change = change_request_execute(request=approved_for(user, people), user=user)
    run_job(change.jobs.get().pk)
    change.refresh_from_db()
    assert change.state == "succeeded", change.error
    return change


# Channels ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """What a channel answered: the outcome, and for a refusal its message (and the API's status and code)."""

    outcome: str
    message: str = ""
    status: int = 0
    code: str = ""


class Api:
    """The REST API with a token of the actor (no credentials for anonymous)."""

    name = "api"

    def __init__(self, user: User | None) -> None:
        self.client = APIClient()
        if user is not None:
            self.client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")

    def post(self, name: str, body: dict[str, Any] | None = None, **kwargs: Any) -> Answer:
        return self.answer(
            self.client.post(reverse(f"operations_api:{name}", kwargs=kwargs), body or {}, format="json")
        )

    def patch(self, name: str, body: dict[str, Any], **kwargs: Any) -> Answer:
        return self.answer(self.client.patch(reverse(f"operations_api:{name}", kwargs=kwargs), body, format="json"))

    def get(self, name: str, **kwargs: Any) -> Answer:
        return self.answer(self.client.get(reverse(f"operations_api:{name}", kwargs=kwargs)))

    def delete(self, name: str, **kwargs: Any) -> Answer:
        return self.answer(self.client.delete(reverse(f"operations_api:{name}", kwargs=kwargs)))

    @staticmethod
    def answer(response: Any) -> Answer:
        if 200 <= response.status_code < 300:
            return Answer(OK, status=response.status_code)
        body = response.json()
        assert set(body) == {"code", "message", "details"}, body
        outcome = {401: AUTH, 405: METHOD}.get(response.status_code)
        if outcome is None:
            outcome = next((o for o, (_s, code) in REFUSALS.items() if code == body["code"]), f"? {body['code']}")
        return Answer(outcome, body["message"], response.status_code, body["code"])


class Browser:
    """The pages, signed in as the actor (not signed in for anonymous); actions are POSTs to the page URLs."""

    name = "browser"

    def __init__(self, user: User | None) -> None:
        self.client = Client()
        if user is not None:
            self.client.force_login(user)

    def post(self, name: str, body: dict[str, Any] | None = None, **kwargs: Any) -> Answer:
        return self.answer(self.client.post(reverse(f"operations:{name}", kwargs=kwargs), body or {}))

    def get(self, name: str, **kwargs: Any) -> Answer:
        return self.answer(self.client.get(reverse(f"operations:{name}", kwargs=kwargs)))

    def answer(self, response: Any) -> Answer:
        login = reverse(settings.LOGIN_URL)
        if response.status_code == 302 and response["Location"].startswith(f"{login}?next="):
            return Answer(AUTH, status=302)
        if response.status_code == 405:
            return Answer(METHOD, status=405)
        if response.status_code == 302:  # POST-redirect-GET: the outcome is the flash message on the next page
            page = self.client.get(response["Location"])
            assert page.status_code == 200, page.content[:500]
            errors = [str(m) for m in page.context["messages"] if m.level_tag == "error"]
            return Answer(OK, status=302) if not errors else Answer("refused", errors[0], 302)
        if response.status_code == 200:
            return Answer(OK, status=200)
        # A form page answered with the refusal's status (403, 409 …) and the message as the form's error.
        form = response.context["form"]
        return Answer("refused", " ".join(form.non_field_errors()), response.status_code)


# Actions -------------------------------------------------------------------------------------------------------------


Maker = Callable[[User, dict[str, User]], ChangeRequest]  # a request of this user, in some state
Subject = Callable[[User | None, dict[str, User]], ChangeRequest | None]  # the request an actor acts on
Effect = Callable[[ChangeRequest | None, User, set[int]], None]  # checks an allowed action's effect


@dataclass(frozen=True)
class Action:
    """How to set up the action's request, take the action on each channel, and see that it took effect."""

    subject: Subject
    api: Callable[[Api, ChangeRequest | None], Answer]
    browser: Callable[[Browser, ChangeRequest | None], Answer]
    took_effect: Effect


def own(make: Maker) -> Subject:
    """The actor's own request (anonymous has none: another steward's)."""
    return lambda actor, people: make(actor or people["owner"], people)


def others(make: Maker) -> Subject:
    """Another steward's request."""
    return lambda actor, people: make(people["owner"], people)


def nothing(actor: User | None, people: dict[str, User]) -> None:
    return None


def state_is(state: str) -> Effect:
    def check(change: ChangeRequest | None, actor: User, earlier: set[int]) -> None:
        assert change is not None
        change.refresh_from_db()
        assert change.state == state

    return check


def created(change: ChangeRequest | None, actor: User, earlier: set[int]) -> None:
    made = ChangeRequest.objects.exclude(pk__in=earlier).get()
    assert (made.requester_id, made.state, made.revert_of_id) == (actor.pk, "draft", None)
    assert made.statement == "ALTER TABLE `sales`.`customers` SET TBLPROPERTIES ('team'='crm')"


def edited(change: ChangeRequest | None, actor: User, earlier: set[int]) -> None:
    assert change is not None
    change.refresh_from_db()
    assert (change.state, change.reason, change.operation["properties"]) == ("draft", "edited", [["team", "growth"]])


def decided(decision: str, state: str) -> Effect:
    def check(change: ChangeRequest | None, actor: User, earlier: set[int]) -> None:
        state_is(state)(change, actor, earlier)
        assert list(change.approvals.values_list("approver", "decision")) == [(actor.pk, decision)]

    return check


def executing(change: ChangeRequest | None, actor: User, earlier: set[int]) -> None:
    state_is("executing")(change, actor, earlier)
    assert change.jobs.get().state == "queued"


def reverting(change: ChangeRequest | None, actor: User, earlier: set[int]) -> None:
    revert = ChangeRequest.objects.exclude(pk__in=earlier).get()
    assert (revert.revert_of_id, revert.state, revert.requester_id) == (change.pk, "draft", actor.pk)


def commented(change: ChangeRequest | None, actor: User, earlier: set[int]) -> None:
    assert list(change.comments.values_list("author", "body")) == [(actor.pk, "looks fine")]


def unchanged(change: ChangeRequest | None, actor: User, earlier: set[int]) -> None:
    """Reading has no effect to check (refusals are compared with the world before)."""


def _form(statement: str = PROPERTIES, reason: str = "matrix") -> dict[str, str]:
    return {"metastore": ALIAS, "statement": statement, "reason": reason}


ACTIONS: dict[str, Action] = {
    "create": Action(
        nothing,
        lambda api, c: api.post("change-request-list", {"statement": PROPERTIES, "metastore": ALIAS}),
        lambda browser, c: browser.post("new", _form()),
        created,
    ),
    "edit own draft": Action(
        own(requested_by),
        lambda api, c: api.patch("change-request-detail", {"statement": EDITED, "reason": "edited"}, pk=c.pk),
        lambda browser, c: browser.post("edit", _form(EDITED, "edited"), pk=c.pk),
        edited,
    ),
    "edit other's draft": Action(
        others(requested_by),
        lambda api, c: api.patch("change-request-detail", {"statement": EDITED, "reason": "edited"}, pk=c.pk),
        lambda browser, c: browser.post("edit", _form(EDITED, "edited"), pk=c.pk),
        edited,
    ),
    "submit own draft": Action(
        own(requested_by),
        lambda api, c: api.post("change-request-submit", pk=c.pk),
        lambda browser, c: browser.post("submit", pk=c.pk),
        state_is("submitted"),
    ),
    "submit other's draft": Action(
        others(requested_by),
        lambda api, c: api.post("change-request-submit", pk=c.pk),
        lambda browser, c: browser.post("submit", pk=c.pk),
        state_is("submitted"),
    ),
    "approve own": Action(
        own(submitted_by),
        lambda api, c: api.post("change-request-approve", {"comment": "mine"}, pk=c.pk),
        lambda browser, c: browser.post("approve", {"comment": "mine"}, pk=c.pk),
        decided("approve", "approved"),
    ),
    "approve other's": Action(
        others(submitted_by),
        lambda api, c: api.post("change-request-approve", {"comment": "ok"}, pk=c.pk),
        lambda browser, c: browser.post("approve", {"comment": "ok"}, pk=c.pk),
        decided("approve", "approved"),
    ),
    "reject own": Action(
        own(submitted_by),
        lambda api, c: api.post("change-request-reject", {"comment": "mine"}, pk=c.pk),
        lambda browser, c: browser.post("reject", {"comment": "mine"}, pk=c.pk),
        decided("reject", "rejected"),
    ),
    "reject other's": Action(
        others(submitted_by),
        lambda api, c: api.post("change-request-reject", {"comment": "wrong table"}, pk=c.pk),
        lambda browser, c: browser.post("reject", {"comment": "wrong table"}, pk=c.pk),
        decided("reject", "rejected"),
    ),
    "execute unapproved": Action(
        own(submitted_by),
        lambda api, c: api.post("change-request-execute", pk=c.pk),
        lambda browser, c: browser.post("execute", {"confirm": "on"}, pk=c.pk),
        executing,
    ),
    "execute approved, requester": Action(
        own(approved_for),
        lambda api, c: api.post("change-request-execute", pk=c.pk),
        lambda browser, c: browser.post("execute", {"confirm": "on"}, pk=c.pk),
        executing,
    ),
    "execute approved, other's": Action(
        others(approved_for),
        lambda api, c: api.post("change-request-execute", pk=c.pk),
        lambda browser, c: browser.post("execute", {"confirm": "on"}, pk=c.pk),
        executing,
    ),
    "cancel own": Action(
        own(submitted_by),
        lambda api, c: api.post("change-request-cancel", pk=c.pk),
        lambda browser, c: browser.post("cancel", pk=c.pk),
        state_is("cancelled"),
    ),
    "cancel other's": Action(
        others(submitted_by),
        lambda api, c: api.post("change-request-cancel", pk=c.pk),
        lambda browser, c: browser.post("cancel", pk=c.pk),
        state_is("cancelled"),
    ),
    "revert": Action(
        others(succeeded_for),
        lambda api, c: api.post("change-request-revert", {"reason": "undo"}, pk=c.pk),
        lambda browser, c: browser.post("revert", {"reason": "undo"}, pk=c.pk),
        reverting,
    ),
    "comment": Action(
        others(submitted_by),
        lambda api, c: api.post("change-request-comments", {"body": "looks fine"}, pk=c.pk),
        lambda browser, c: browser.post("comment", {"body": "looks fine"}, pk=c.pk),
        commented,
    ),
    "read audit": Action(
        others(submitted_by),
        lambda api, c: api.get("audit-list"),
        lambda browser, c: browser.get("audit"),
        unchanged,
    ),
    "write audit": Action(
        others(submitted_by),
        lambda api, c: _all_refused(
            api.post("audit-list", {"actor": "mallory", "action": "approve"}),
            api.delete("audit-detail", pk=AuditRecord.objects.latest("id").pk),
        ),
        lambda browser, c: _all_refused(
            browser.post("audit", {"actor": "mallory", "action": "approve"}),
            browser.post("audit_export", {"actor": "mallory"}, fmt="json"),
        ),
        unchanged,
    ),
}


def _all_refused(*answers: Answer) -> Answer:
    """Several attempts at the same thing answer the same."""
    assert len({a.outcome for a in answers}) == 1, answers
    return answers[0]


# The world, to show that a refusal wrote nothing ---------------------------------------------------------------------


def world(metastore: Metastore) -> dict[str, Any]:
    """Everything an action could write: the console's rows and the table's metastore parameters."""
    return {
        "requests": sorted(
            ChangeRequest.objects.values_list("pk", "state", "reason", "fingerprint", "requester", "scheduled_for")
        ),
        "approvals": sorted(Approval.objects.values_list("pk", "request", "approver", "decision")),
        "comments": Comment.objects.count(),
        "jobs": Job.objects.count(),
        "executions": Execution.objects.count(),
        "audit": AuditRecord.objects.exclude(outcome="refused").count(),  # refusals are audited: not a change
        "idempotency_keys": IdempotencyKey.objects.count(),
        "table_params": sorted(
            TableParam.objects.using(metastore.alias)
            .filter(table__database__name="sales", table__name="customers")
            .values_list("key", "value")
        ),
    }


def pk_free(message: str) -> str:
    return re.sub(r"#\d+", "#<pk>", message)


# The matrix ----------------------------------------------------------------------------------------------------------


@ON_HIVE31_PG
@pytest.mark.slow  # every action x every role through both channels: the full suite runs it, the quick tier does not
@pytest.mark.parametrize(("action", "role", "expected"), CASES, ids=[f"{a}-{r}" for a, r, _e in CASES])
def test_the_permission_matrix_holds_on_the_api_and_in_the_browser(
    metastore: Metastore, people: dict[str, User], action: str, role: str, expected: str
) -> None:
    """Each channel gives the table's outcome; a refusal says the same words on both and writes nothing."""
    actor = None if role == "anonymous" else people[role]
    answers: dict[str, Answer] = {}
    for channel in (Api(actor), Browser(actor)):
        # given: the action's request, set up afresh for each channel
        subject = ACTIONS[action].subject(actor, people)
        before = world(metastore)
        earlier = set(ChangeRequest.objects.values_list("pk", flat=True))

        # when
        answers[channel.name] = answer = getattr(ACTIONS[action], channel.name)(channel, subject)

        # then: an allowed action took effect; a refused one wrote nothing
        if answer.outcome == OK == expected:
            ACTIONS[action].took_effect(subject, actor, earlier)
        elif expected != OK:
            assert world(metastore) == before, f"{channel.name}: a refused '{action}' wrote something"

    api, browser = answers["api"], answers["browser"]
    if expected in REFUSALS:
        assert (api.outcome, api.status, api.code) == (expected, *REFUSALS[expected]), api
        assert browser.outcome == "refused", browser
        assert pk_free(browser.message) == pk_free(api.message), "the browser and the API refuse in other words"
        assert browser.status in (302, REFUSALS[expected][0]), browser
    else:
        assert {"api": api.outcome, "browser": browser.outcome} == {"api": expected, "browser": expected}, answers
    if expected == SELF:
        assert api.message == "Nobody approves their own change (four-eyes rule)."


def test_the_matrix_covers_every_role_and_action() -> None:
    """Every action of the table can be taken, and every row names an outcome for each role."""
    assert set(ACTIONS) == set(MATRIX)
    assert all(len(outcomes) == len(ROLES) for outcomes in MATRIX.values())


# No path around four eyes --------------------------------------------------------------------------------------------


@pytest.fixture
def superuser(people: dict[str, User]) -> User:
    return User.objects.create_superuser("root", "root@example.com", "not-a-secret-1")


@ON_HIVE31_PG
def test_no_path_lets_anyone_approve_their_own_request(
    metastore: Metastore, people: dict[str, User], superuser: User
) -> None:
    """Approvers, admins and a superuser, through the API (with and without an Idempotency-Key) and the page, on
    their own submitted request: self_approval_forbidden every time, and no approval is ever recorded."""
    for actor in (people["approver"], people["admin"], superuser):
        # given
        change = submitted_by(actor)
        before = world(metastore)
        api, browser = Api(actor), Browser(actor)

        # when
        answers = [
            api.post("change-request-approve", pk=change.pk),
            api.answer(
                api.client.post(
                    reverse("operations_api:change-request-approve", kwargs={"pk": change.pk}),
                    {"comment": "retry"},
                    format="json",
                    HTTP_IDEMPOTENCY_KEY="approve-own-1",
                )
            ),
            api.post("change-request-reject", {"comment": "mine"}, pk=change.pk),
            browser.post("approve", pk=change.pk),
            browser.post("reject", {"comment": "mine"}, pk=change.pk),
        ]

        # then
        assert [a.code for a in answers[:3]] == ["self_approval_forbidden"] * 3, (actor, answers)
        assert [a.outcome for a in answers[3:]] == ["refused"] * 2
        assert {a.message for a in answers} == {"Nobody approves their own change (four-eyes rule)."}
        assert world(metastore) == before
        change.refresh_from_db()
        assert (change.state, change.approvals.count()) == ("submitted", 0)


@ON_HIVE31_PG
def test_no_path_executes_an_unapproved_request(
    metastore: Metastore, people: dict[str, User], superuser: User, settings
) -> None:
    """A draft, a submitted request short of its approvals, a rejected and a cancelled one: neither the requester,
    an admin nor a superuser executes or schedules any of them, through the API or the pages, and the scheduler
    finds nothing to run afterwards. No job, no execution, the metastore untouched."""
    # given: two approvals needed, so one approval is not enough
    settings.CATALOG_APPROVAL_POLICY = {"default": 2, "rules": []}
    steward = people["steward"]
    draft = requested_by(steward)
    short = change_request_approve(request=submitted_by(steward), user=people["checker"])
    refused = change_request_reject(request=submitted_by(steward), user=people["checker"], comment="no")
    cancelled = change_request_cancel(request=submitted_by(steward), user=steward)
    assert [c.state for c in (draft, short, refused, cancelled)] == ["draft", "submitted", "rejected", "cancelled"]
    assert (short.approvals_given, short.required_approvals) == (1, 2)
    later = (timezone.now() + timedelta(hours=1)).isoformat()
    before = world(metastore)

    for actor in (steward, people["admin"], superuser):
        api, browser = Api(actor), Browser(actor)
        for change in (draft, short, refused, cancelled):
            # when
            answers = [
                api.post("change-request-execute", pk=change.pk),
                api.post("change-request-execute", {"at": later}, pk=change.pk),
                browser.post("execute", {"confirm": "on"}, pk=change.pk),
                browser.post("schedule", {"confirm": "on", "at": later[:16]}, pk=change.pk),
            ]

            # then
            assert [a.outcome for a in answers] == [STATE, STATE, "refused", "refused"], (actor, change.state, answers)
            assert answers[2].status == answers[3].status == 409
            assert world(metastore) == before

    call_command("run_jobs", once=True, stdout=io.StringIO())
    assert world(metastore) == before
    assert not Job.objects.exists() and not Execution.objects.exists()
