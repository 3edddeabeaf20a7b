"""
The change-request pages through Django's test client, on a PostgreSQL and a MariaDB metastore of different
Hive versions: the form and its live preview, the request page and its actions (disabled ones say why, per
role), four eyes, confirm-before-execute, the job progress polled until htmx is told to stop (286), the inbox and
the lists, the audit log and its export, and the table page's change history.

Executions rename real directories: the ``warehouse`` fixture (``tests/fixtures/operations.py``) puts the
metastore's warehouse back exactly. Jobs run "eager" (when the view's transaction commits), which the test
transaction only does inside ``django_capture_on_commit_callbacks(execute=True)``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import timedelta
from html import unescape
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.models import Approval, AuditRecord, ChangeRequest, Job
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_submit,
)
from operations.services.jobs import run_job
from operations.views import change_requests as change_request_views
from tests.fixtures.factories import html, make_user, token_client
from tests.fixtures.operations import location_of

pytestmark = [pytest.mark.django_db(databases="__all__"), pytest.mark.usefixtures("eager_jobs")]
ON_TWO_METASTORES = pytest.mark.parametrize("metastore_alias", ["hive31_pg", "hive23_my"], indirect=True)

RENAME = "ALTER TABLE sales.customers RENAME TO sales.clients"
SET_PROPERTY = "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='growth')"
ROLES = ("viewer", "steward", "approver", "admin")


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def action(content: str, name: str) -> str:
    """The HTML of one action (``id="action-<name>"``) on the request page."""
    match = re.search(rf'<(form|div)[^>]*id="action-{name}".*?</\1>', content, re.DOTALL)
    assert match, f"the page has no {name} action"
    return match.group(0)


def is_disabled(content: str, name: str) -> bool:
    return "disabled" in re.search(r"<(button|a)\b[^>]*>", action(content, name)).group(0)


def reason(content: str, name: str) -> str:
    match = re.search(rf'id="reason-{name}">([^<]*)<', content)
    return unescape(match.group(1)) if match else ""


def create(people, metastore: Metastore, statement: str = RENAME, who: str = "steward") -> ChangeRequest:
    return change_request_create(
        user=people[who], metastore=metastore.name, spec=parse_alter(statement), reason="tidy the names"
    )


def submitted(people, metastore: Metastore, statement: str = RENAME, who: str = "steward") -> ChangeRequest:
    return change_request_submit(request=create(people, metastore, statement, who), user=people[who])


def approved(people, metastore: Metastore, statement: str = RENAME) -> ChangeRequest:
    request = submitted(people, metastore, statement)
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name], comment="looks right")
    assert request.state == "approved"
    return request


def detail(pk: int) -> str:
    return reverse("operations:detail", args=[pk])


def freshness(pk: int) -> str:
    return reverse("operations:freshness", args=[pk])


# The form and its live preview -------------------------------------------------------------------------------------


@ON_TWO_METASTORES
def test_the_live_preview_shows_statement_diff_counts_moves_cost_risk_and_approvals(metastore, people):
    # given
    client = signed_in(people["steward"])

    # when
    page = client.get(reverse("operations:new"), {"metastore": metastore.name})
    response = client.post(
        reverse("operations:preview"),
        {"metastore": metastore.name, "statement": "alter table sales.customers rename to sales.clients"},
        HTTP_HX_REQUEST="true",
    )

    # then
    form = html(page)
    assert page.status_code == 200
    assert 'hx-post="/changes/preview/"' in form
    # only the statement (typed, debounced) and the metastore re-run the preview, not the reason
    trigger = re.search(r'hx-post="/changes/preview/" hx-trigger="([^"]*)"', form).group(1)
    assert trigger == "input changed delay:500ms from:#id_statement, change from:#id_metastore"
    content = html(response)
    assert response.status_code == 200
    assert "<html" not in content  # only the partial
    assert escape("ALTER TABLE `sales`.`customers` RENAME TO `sales`.`clients`") in content
    assert re.search(r'data-field="name">\s*<th scope="row">Table name</th>\s*<td[^>]*>customers</td>', content)
    assert re.search(
        r'data-table="TBLS">\s*<td class="mono table-name">TBLS</td>\s*<td class="num">0</td><td class="num">1</td>',
        content,
    )
    assert "sales.db/customers" in content and "sales.db/clients" in content  # the directory move
    assert "high risk" in content
    assert re.search(
        r'id="preview-approvals"><span class="label">Approvals needed</span><span class="value">2<', content
    )
    assert "rule “high risk” matched by data moved" in content
    assert 'data-criterion="data_moved"' in content  # the criteria that fired, explained
    assert "(('" not in content and "('" not in content  # no Python tuples anywhere
    assert f"Hive {metastore.schema.version.major}.{metastore.schema.version.minor}" in content
    assert 'id="preview-hive-cost"' in content
    assert re.search(
        r'data-event="ALTER_TABLE"><td class="mono">ALTER_TABLE</td><td class="num">1</td>', content
    )  # the notification event the rename writes


@ON_TWO_METASTORES
def test_a_parse_error_shows_its_line_and_column_and_a_blocker_its_rule(metastore, people):
    client = signed_in(people["steward"])
    url = reverse("operations:preview")

    bad = html(client.post(url, {"metastore": metastore.name, "statement": "ALTER TABLE sales.customers\nRENAM TO x"}))
    blocked = html(
        client.post(
            url, {"metastore": metastore.name, "statement": "ALTER TABLE sales.customers RENAME TO sales.orders"}
        )
    )
    missing = html(
        client.post(url, {"metastore": metastore.name, "statement": "ALTER TABLE sales.nope SET OWNER USER x"})
    )

    assert 'id="parse-error"' in bad
    assert "ddl_parse_error" in bad and "line 2, column 1" in bad
    assert "RENAM TO x\n^" in bad  # the caret under the offending word
    assert "ALTER TABLE [db.]t RENAME TO [db.]t2" in bad  # the supported statements
    assert 'id="preview-blockers"' in blocked
    assert re.search(r'data-owner="hive">Hive 2\.7</span> new table sales\.orders already exists', blocked)
    # the target table's directory is also another table's: Hive's rules and the console's both refuse it
    heading = "Blocked — Hive would refuse this change, and so do the console's safety rules</h3>"
    assert heading in blocked
    assert re.search(r'data-owner="console">Console · containment</span>', blocked)
    assert 'id="preview-error"' in missing and "not_found" in missing


@ON_TWO_METASTORES
def test_saving_the_form_creates_a_draft_the_requester_can_submit(metastore, people):
    # given
    client = signed_in(people["steward"])

    # when
    response = client.post(
        reverse("operations:new"), {"metastore": metastore.name, "statement": RENAME, "reason": "tidy"}, follow=True
    )

    # then
    request = ChangeRequest.objects.get()
    assert response.redirect_chain == [(detail(request.pk), 302)]
    assert request.state == "draft" and request.requester == people["steward"] and request.reason == "tidy"
    content = html(response)
    assert f"Draft #{request.pk} saved" in content
    assert not is_disabled(content, "submit")
    assert escape(request.statement) in content

    # and when submitting it
    submitted_page = client.post(reverse("operations:submit", args=[request.pk]), follow=True)
    request.refresh_from_db()
    assert request.state == "submitted"
    assert "needs 2 approval(s)" in html(submitted_page)


@ON_TWO_METASTORES
def test_a_statement_that_does_not_parse_is_not_saved(metastore, people):
    response = signed_in(people["steward"]).post(
        reverse("operations:new"), {"metastore": metastore.name, "statement": "ALTER TABLE sales.customers DROP x"}
    )

    assert response.status_code == 400
    assert 'id="statement-error"' in html(response) and "Cannot parse the statement at line 1" in html(response)
    assert not ChangeRequest.objects.exists()


@ON_TWO_METASTORES
def test_a_viewer_sees_why_they_cannot_request_and_posting_is_refused(metastore, people):
    client = signed_in(people["viewer"])

    page = client.get(reverse("operations:new"))
    refused = client.post(reverse("operations:new"), {"metastore": metastore.name, "statement": RENAME})

    assert 'id="not-allowed">Only stewards can request changes.' in html(page)
    assert re.search(r'<button type="submit" class="primary" disabled[^>]*>Save as draft', html(page))
    assert refused.status_code == 403 and "Only stewards can request changes." in html(refused)
    assert not ChangeRequest.objects.exists()


@ON_TWO_METASTORES
def test_only_the_requester_edits_a_draft_and_the_preview_follows(metastore, people):
    # given
    draft = create(people, metastore, SET_PROPERTY)
    url = reverse("operations:edit", args=[draft.pk])
    changed = "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='finance')"

    # when
    form = html(signed_in(people["steward"]).get(url))
    refused = signed_in(people["steward2"]).post(url, {"metastore": metastore.name, "statement": changed})
    edited = signed_in(people["steward"]).post(url, {"metastore": metastore.name, "statement": changed}, follow=True)

    # then
    assert escape(draft.statement) in form  # the form starts from the draft
    assert refused.status_code == 403 and f"Only the requester can edit request #{draft.pk}." in html(refused)
    draft.refresh_from_db()
    assert "finance" in draft.statement and draft.state == "draft"
    assert f"Draft #{draft.pk} updated." in messages_of(edited)
    assert re.search(
        r'<li class="added">.*?<code>team</code>\s*= <span class="after">finance</span>', html(edited), re.DOTALL
    )


# The full flow -----------------------------------------------------------------------------------------------------


@ON_TWO_METASTORES
def test_request_approve_twice_confirm_execute_then_the_table_has_its_new_name(
    metastore, people, warehouse: Path, django_capture_on_commit_callbacks
):
    # given: a submitted rename (high risk: two approvals)
    steward = signed_in(people["steward"])
    steward.post(reverse("operations:new"), {"metastore": metastore.name, "statement": RENAME, "reason": "tidy"})
    request = ChangeRequest.objects.get()
    steward.post(reverse("operations:submit", args=[request.pk]))

    # when: two approvers approve from their inbox
    for name in ("approver", "approver2"):
        client = signed_in(people[name])
        assert f'data-request="{request.pk}"' in html(client.get(reverse("operations:inbox")))
        with django_capture_on_commit_callbacks(execute=True):
            client.post(reverse("operations:approve", args=[request.pk]), {"comment": f"checked by {name}"})
    # and the steward confirms the execution
    confirm = steward.get(reverse("operations:execute", args=[request.pk]))
    with django_capture_on_commit_callbacks(execute=True):
        executed = steward.post(reverse("operations:execute", args=[request.pk]), {"confirm": "on"})

    # then
    request.refresh_from_db()
    assert 'name="confirm"' in html(confirm) and 'id="confirm-preview"' in html(confirm)
    assert executed.status_code == 302 and executed["Location"] == detail(request.pk)
    assert request.state == "succeeded"
    assert Table.objects.using(metastore.alias).filter(database__name="sales", name="clients").exists()
    assert (warehouse / "sales.db" / "clients").is_dir() and not (warehouse / "sales.db" / "customers").exists()

    page = html(steward.get(detail(request.pk)))
    assert 'id="state-badge">Succeeded<' in page
    assert 'id="execution-duration"' in page
    counts = re.search(r'id="execution-counts".*?</table>', page, re.DOTALL).group(0)
    assert re.search(
        r'data-table="TBLS">\s*<td class="mono table-name">TBLS</td>(\s*<td class="num[^"]*">\d+</td>){6}', counts
    )
    assert 'data-table="TBLS">' in counts and 'class="row-warn"' not in counts.split('data-table="TBLS"')[1][:400]
    assert "checked by approver" in page and "checked by approver2" in page
    assert not is_disabled(page, "revert")

    history = html(steward.get(reverse("catalog:table", args=[metastore.name, "sales", "clients"])))
    assert 'id="change-history"' in history
    assert all(f'data-action="{a}"' in history for a in ("create", "submit", "approve", "execute", "finish"))

    actions = list(AuditRecord.objects.filter(request_id_ref=request.pk).values_list("action", flat=True))
    assert actions == ["create", "submit", "approve", "approve", "execute", "finish"]

    # and a revert can be requested from the page with its reason (issue 29: the page had no field for it): a new
    # draft that needs approval too, whose page and refusals name the request it reverts, not only its execution
    assert 'name="reason"' in re.search(r'<form[^>]*id="revert".*?</form>', page, re.DOTALL).group(0)
    reverted = steward.post(reverse("operations:revert", args=[request.pk]), {"reason": "clients was the wrong name"},
                            follow=True)  # fmt: skip
    revert = ChangeRequest.objects.get(revert_of=request)
    assert reverted.redirect_chain[-1][0] == detail(revert.pk)
    assert (revert.state, revert.reason) == ("draft", "clients was the wrong name")
    reverted_page = html(reverted)
    assert f"revert of #{request.pk}" in reverted_page and "clients was the wrong name" in reverted_page
    assert re.search(rf'id="reverts">Reverts <a href="{detail(request.pk)}">request #{request.pk}</a> '
                     rf'\(what its execution #{request.execution_id} changed\)', reverted_page)  # fmt: skip
    assert reason(reverted_page, "edit").startswith(
        f"Request #{revert.pk} reverts request #{request.pk} (its execution #{request.execution_id}): "
    )


# Buttons, roles and four eyes --------------------------------------------------------------------------------------


@ON_TWO_METASTORES
def test_buttons_not_allowed_are_disabled_with_the_reason_for_each_role(metastore, people):
    # given: a submitted rename of the steward's, needing two approvals
    request = submitted(people, metastore)
    pages = {name: html(signed_in(people[name]).get(detail(request.pk))) for name in ROLES}

    # then: the viewer can do nothing, and each disabled button says why
    viewer = pages["viewer"]
    assert (
        is_disabled(viewer, "approve") and reason(viewer, "approve") == "Only approvers can approve or reject changes."
    )
    assert is_disabled(viewer, "reject")
    assert reason(viewer, "execute") == "Only the requester or an operator (admin) can execute a request."
    assert reason(viewer, "cancel") == "Only the requester can cancel a request."

    # the requester cannot approve and must wait before executing, but may cancel
    steward = pages["steward"]
    assert reason(steward, "approve") == "Only approvers can approve or reject changes."
    assert reason(steward, "execute") == f"Request #{request.pk} is waiting for approval: 0 of 2 approvals given."
    assert is_disabled(steward, "execute") and not is_disabled(steward, "cancel")

    # an approver may decide but not execute or cancel
    approver = pages["approver"]
    assert not is_disabled(approver, "approve") and not is_disabled(approver, "reject")
    assert reason(approver, "execute") == "Only the requester or an operator (admin) can execute a request."
    assert is_disabled(approver, "cancel")

    # an admin may decide, and execute once approved
    admin = pages["admin"]
    assert not is_disabled(admin, "approve")
    assert reason(admin, "execute") == f"Request #{request.pk} is waiting for approval: 0 of 2 approvals given."

    # and a draft cannot be submitted by someone else
    draft = create(people, metastore, SET_PROPERTY)
    other = html(signed_in(people["steward2"]).get(detail(draft.pk)))
    assert reason(other, "submit") == f"Only the requester can submit request #{draft.pk}."


@ON_TWO_METASTORES
def test_anonymous_users_are_sent_to_sign_in(metastore, people):
    request = submitted(people, metastore)
    anonymous = Client()

    for url in (detail(request.pk), reverse("operations:list"), reverse("operations:audit"), reverse("operations:new")):
        response = anonymous.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=/changes/")
    assert anonymous.post(reverse("operations:approve", args=[request.pk])).status_code == 302
    assert not Approval.objects.exists()


@ON_TWO_METASTORES
def test_the_requester_cannot_approve_their_own_request_even_as_admin(metastore, people):
    # given: the admin (also steward and approver) requested the change
    request = submitted(people, metastore, who="admin")
    client = signed_in(people["admin"])

    # when
    page = html(client.get(detail(request.pk)))
    response = client.post(reverse("operations:approve", args=[request.pk]), {"comment": "mine"}, follow=True)

    # then
    four_eyes = "Nobody approves their own change (four-eyes rule)."
    assert is_disabled(page, "approve") and reason(page, "approve") == four_eyes
    assert response.redirect_chain == [(detail(request.pk), 302)]
    assert four_eyes in messages_of(response)
    request.refresh_from_db()
    assert request.state == "submitted" and not Approval.objects.exists()


@ON_TWO_METASTORES
def test_an_approver_cannot_decide_twice_and_rejecting_needs_a_comment(metastore, people):
    # given: one of two approvals given
    request = submitted(people, metastore)
    client = signed_in(people["approver"])
    client.post(reverse("operations:approve", args=[request.pk]))
    other = signed_in(people["approver2"])

    # when
    page = html(client.get(detail(request.pk)))
    silent = other.post(reverse("operations:reject", args=[request.pk]), {"comment": " "}, follow=True)
    rejected = other.post(reverse("operations:reject", args=[request.pk]), {"comment": "wrong table"}, follow=True)

    # then
    assert reason(page, "approve") == f"You already decided on request #{request.pk}."
    assert messages_of(silent) == ["Say why you reject the change."]
    assert messages_of(rejected) == [f"Request #{request.pk} rejected."]
    request.refresh_from_db()
    assert request.state == "rejected"
    assert "wrong table" in html(rejected)
    assert "This request is closed" in html(rejected)


# Confirm before execute, schedule, job progress --------------------------------------------------------------------


@ON_TWO_METASTORES
def test_nothing_runs_without_ticking_the_confirmation(metastore, people, django_capture_on_commit_callbacks):
    # given
    request = approved(people, metastore)
    client = signed_in(people["steward"])

    # when
    page = client.get(reverse("operations:execute", args=[request.pk]))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(reverse("operations:execute", args=[request.pk]), {})

    # then
    checkbox = re.search(r'<input type="checkbox" name="confirm"[^>]*>', html(page)).group(0)
    assert "checked" not in checkbox and "disabled" not in checkbox
    assert response.status_code == 400
    assert "Tick the confirmation box: nothing runs without it." in html(response)
    assert callbacks == []
    request.refresh_from_db()
    assert request.state == "approved" and not Job.objects.exists()


@ON_TWO_METASTORES
def test_the_confirmation_is_disabled_for_those_who_may_not_execute(metastore, people):
    request = approved(people, metastore)
    client = signed_in(people["approver"])

    page = html(client.get(reverse("operations:execute", args=[request.pk])))
    refused = client.post(reverse("operations:execute", args=[request.pk]), {"confirm": "on"})

    reason_text = "Only the requester or an operator (admin) can execute a request."
    assert f'id="not-allowed">{reason_text}' in page
    assert re.search(r'<input type="checkbox" name="confirm" id="id_confirm" value="on" disabled>', page)
    assert refused.status_code == 403 and reason_text in html(refused)
    request.refresh_from_db()
    assert request.state == "approved"


@ON_TWO_METASTORES
def test_scheduling_needs_a_future_time(metastore, people):
    request = approved(people, metastore)
    client = signed_in(people["steward"])
    url = reverse("operations:schedule", args=[request.pk])
    later = (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")

    past = client.post(url, {"confirm": "on", "at": "2020-01-01T00:00"})
    scheduled = client.post(url, {"confirm": "on", "at": later}, follow=True)

    assert past.status_code == 400 and "Pick a time in the future" in html(past)
    request.refresh_from_db()
    assert request.state == "scheduled"
    assert 'id="state-badge">Scheduled<' in html(scheduled)
    assert f"is scheduled for {later.replace('T', ' ')} UTC" in html(scheduled)


@ON_TWO_METASTORES
def test_the_job_progress_is_polled_until_done_then_answers_286(
    metastore, people, warehouse: Path, settings, django_capture_on_commit_callbacks
):
    # given: jobs left to a worker, so the request page finds the job queued
    settings.CATALOG_JOBS_MODE = "tasks"
    request = approved(people, metastore)
    client = signed_in(people["steward"])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("operations:execute", args=[request.pk]), {"confirm": "on"})
    job = Job.objects.get(change_request=request)
    job_url = reverse("operations:job", args=[request.pk])

    # when: the page polls while the job waits
    page = html(client.get(detail(request.pk)))
    waiting = client.get(job_url, HTTP_HX_REQUEST="true")
    # and the worker runs it
    with django_capture_on_commit_callbacks(execute=True):
        run_job(job.pk)
    done = client.get(job_url, HTTP_HX_REQUEST="true")

    # then
    assert f'hx-get="{job_url}" hx-trigger="load delay:500ms, every 1s"' in page
    assert 'id="state-badge">Executing<' in page
    assert waiting.status_code == 200 and 'data-state="queued"' in html(waiting)
    assert done.status_code == 286
    content = html(done)
    assert 'data-state="succeeded"' in content and 'value="100" max="100"' in content
    assert 'id="execution-duration"' in content and 'id="execution-counts"' in content
    assert '<span class="badge ok" id="state-badge" hx-swap-oob="true">Succeeded</span>' in content
    assert 'id="actions" hx-swap-oob="true"' in content
    assert re.search(r'id="history" hx-swap-oob="true">.*data-action="finish"', content, re.DOTALL)
    finished = html(client.get(detail(request.pk)))
    assert "hx-trigger=" not in re.search(r'<div id="job-progress"[^>]*>', finished).group(0)


@pytest.fixture
def worker_ends_the_job_after_the_request_is_read(
    metastore, people, settings, django_capture_on_commit_callbacks, monkeypatch
):
    """An executing request whose queued job a worker runs (the request ended, then the job) just after a view read
    the request; yields the request. Reading the job after the request would see it ended beside an executing one."""
    settings.CATALOG_JOBS_MODE = "tasks"
    request = approved(people, metastore)
    with django_capture_on_commit_callbacks(execute=True):
        signed_in(people["steward"]).post(reverse("operations:execute", args=[request.pk]), {"confirm": "on"})
    job = Job.objects.get(change_request=request)
    read_request = change_request_views.get_change_request

    def read_then_the_worker_finishes(pk: int) -> ChangeRequest:
        change = read_request(pk)
        if Job.objects.filter(pk=job.pk, state="queued").exists():
            with django_capture_on_commit_callbacks(execute=True):
                run_job(job.pk)
        return change

    monkeypatch.setattr(change_request_views, "get_change_request", read_then_the_worker_finishes)
    yield request
    assert Job.objects.get(pk=job.pk).state == "succeeded"


@ON_TWO_METASTORES
def test_a_poll_never_shows_a_finished_job_beside_a_request_still_executing(
    people, warehouse: Path, worker_ends_the_job_after_the_request_is_read
):
    """The worker ends the request, then the job: a poll that showed the job done beside a request read before it
    ended would stop polling and leave the badge at Executing (seen in the browser walk)."""
    job_url = reverse("operations:job", args=[worker_ends_the_job_after_the_request_is_read.pk])
    client = signed_in(people["steward"])

    # when: the poll renders while the worker ends the job, then polls again
    poll = client.get(job_url, HTTP_HX_REQUEST="true")
    next_poll = client.get(job_url, HTTP_HX_REQUEST="true")

    # then: the first poll still polls (it read the job running); the next shows both ended and stops
    assert poll.status_code == 200 and 'data-state="succeeded"' not in html(poll)
    assert next_poll.status_code == 286
    assert 'id="state-badge" hx-swap-oob="true">Succeeded<' in html(next_poll)


@ON_TWO_METASTORES
def test_the_request_page_never_shows_a_finished_job_beside_a_request_still_executing(
    people, warehouse: Path, worker_ends_the_job_after_the_request_is_read
):
    page = html(signed_in(people["steward"]).get(detail(worker_ends_the_job_after_the_request_is_read.pk)))

    # then: the page shows the request executing and keeps polling its job
    assert 'id="state-badge">Executing<' in page
    assert re.search(r'<div id="job-progress"[^>]*hx-trigger=', page)


# Stale previews ----------------------------------------------------------------------------------------------------


@ON_TWO_METASTORES
def test_a_stale_preview_shows_what_changed_and_the_requester_refreshes_it(metastore, people):
    """The request page loads its freshness check on demand (htmx); it says what changed and swaps in the actions
    that now wait for a refresh; the requester refreshes the preview."""
    # given: the table changes after the request was submitted
    request = submitted(people, metastore, SET_PROPERTY)
    table = Table.objects.on(metastore).get(database__name="sales", name="customers")
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).create(table=table, key="changed_by_hive", value="1")

    # when
    approver = signed_in(people["approver"])
    page = html(approver.get(detail(request.pk)))
    approver_check = html(approver.get(freshness(request.pk), headers={"HX-Request": "true"}))
    steward = signed_in(people["steward"])
    steward_check = html(steward.get(freshness(request.pk), headers={"HX-Request": "true"}))
    refreshed = steward.post(reverse("operations:refresh", args=[request.pk]), follow=True)

    # then
    assert 'id="stale"' not in page and f'hx-get="{freshness(request.pk)}"' in page
    assert 'id="stale"' in approver_check and "Table parameters" in approver_check
    assert "changed_by_hive" in approver_check
    assert 'id="actions" hx-swap-oob="true"' in approver_check
    assert reason(approver_check, "approve").startswith(f"sales.customers changed since request #{request.pk}")
    assert reason(approver_check, "refresh") == (
        f"Only the requester can refresh the preview of request #{request.pk}."
    )
    assert not is_disabled(steward_check, "refresh")
    assert "was refreshed" in html(refreshed)
    assert 'id="stale"' not in html(steward.get(freshness(request.pk), headers={"HX-Request": "true"}))
    assert not is_disabled(html(signed_in(people["approver"]).get(detail(request.pk))), "approve")


@ON_TWO_METASTORES
def test_a_closed_request_page_checks_nothing(metastore, people):
    """Only open requests are checked against the table: a rejected request's page has no freshness check."""
    # given
    request = submitted(people, metastore, SET_PROPERTY)
    rejected = signed_in(people["approver"])
    rejected.post(reverse("operations:reject", args=[request.pk]), {"comment": "no"})

    # when
    page = html(signed_in(people["steward"]).get(detail(request.pk)))

    # then
    assert ChangeRequest.objects.get(pk=request.pk).state == "rejected"
    assert "operations:freshness" not in page and freshness(request.pk) not in page


# Inbox and lists ---------------------------------------------------------------------------------------------------


@ON_TWO_METASTORES
def test_the_inbox_holds_what_waits_for_each_approver(metastore, people):
    # given
    waiting = submitted(people, metastore)
    create(people, metastore, SET_PROPERTY)  # a draft: not waiting
    own = submitted(people, metastore, "ALTER TABLE sales.customers SET OWNER USER bob", who="admin")
    decided = submitted(people, metastore, "ALTER TABLE sales.customers RENAME TO sales.customers2")
    change_request_approve(request=decided, user=people["approver"])

    # when
    inboxes = {name: html(signed_in(people[name]).get(reverse("operations:inbox"))) for name in people}

    # then
    def listed(content: str) -> set[int]:
        return {int(pk) for pk in re.findall(r'data-request="(\d+)"', content)}

    assert listed(inboxes["approver"]) == {waiting.pk, own.pk}
    assert listed(inboxes["approver2"]) == {waiting.pk, own.pk, decided.pk}
    assert listed(inboxes["admin"]) == {waiting.pk, decided.pk}
    assert listed(inboxes["steward"]) == listed(inboxes["viewer"]) == set()
    assert "Nothing is waiting for you." in inboxes["viewer"]
    assert 'id="nav-inbox-count">3<' in inboxes["approver2"]


@ON_TWO_METASTORES
def test_an_approver_scoped_to_other_databases_sees_nothing_and_is_told_why(metastore, people, settings):
    settings.CATALOG_APPROVER_SCOPES = {"marketing-approvers": ["marketing"]}
    scoped = make_user("scoped", "approver", "marketing-approvers")
    request = submitted(people, metastore)
    client = signed_in(scoped)

    inbox = html(client.get(reverse("operations:inbox")))
    page = html(client.get(detail(request.pk)))

    assert f'data-request="{request.pk}"' not in inbox and 'id="nav-inbox-count"' not in inbox
    assert reason(page, "approve") == "Your approval rights do not cover database 'sales'."


@ON_TWO_METASTORES
def test_the_request_lists_filter_and_page_by_cursor(metastore, people):
    # given: four requests of two stewards
    rename = submitted(people, metastore)
    props = [create(people, metastore, f"ALTER TABLE sales.customers SET TBLPROPERTIES ('k{i}'='v')") for i in range(2)]
    other = create(people, metastore, "ALTER TABLE sales.orders SET OWNER USER bob", who="steward2")
    client = signed_in(people["viewer"])
    url = reverse("operations:list")

    def listed(params: dict) -> list[int]:
        return [int(pk) for pk in re.findall(r'data-request="(\d+)"', html(client.get(url, params)))]

    # then
    assert listed({}) == [other.pk, props[1].pk, props[0].pk, rename.pk]
    assert listed({"state": "submitted"}) == [rename.pk]
    assert listed({"risk": "high"}) == [rename.pk]
    assert listed({"requester": "steward2"}) == [other.pk]
    assert listed({"database": "sales", "table": "orders"}) == [other.pk]
    first = html(client.get(url, {"page_size": 2}))
    cursor = re.search(r'rel="next" href="[^"]*cursor=([^"&]+)', first).group(1)
    assert listed({"page_size": 2, "cursor": cursor}) == [props[0].pk, rename.pk]
    partial = client.get(url, {"state": "draft"}, HTTP_HX_REQUEST="true")
    assert "<html" not in html(partial) and 'id="requests"' in html(partial)
    bad = client.get(url, {"state": "nonsense"})
    assert bad.status_code == 400 and "state must be one of" in html(bad)

    mine = html(signed_in(people["steward2"]).get(reverse("operations:mine")))
    assert re.findall(r'data-request="(\d+)"', mine) == [str(other.pk)]


def test_the_request_lists_never_read_a_stored_preview(metastore, people):
    """A stored preview can be megabytes: the list pages, the API's list and the inbox select the columns they show,
    never ``preview``."""
    # given
    submitted(people, metastore)
    approver = signed_in(people["approver"])
    token = token_client(people["viewer"])

    # when
    with CaptureQueriesContext(connection) as queries:
        pages = [
            approver.get(reverse("operations:list")),
            approver.get(reverse("operations:inbox")),
            token.get(reverse("operations_api:change-request-list")),
        ]

    # then
    assert [page.status_code for page in pages] == [200, 200, 200]
    requests = [q["sql"] for q in queries.captured_queries if "operations_changerequest" in q["sql"]]
    assert requests and not [sql for sql in requests if '"operations_changerequest"."preview"' in sql]


def test_a_draft_stores_a_bounded_number_of_blockers_per_kind_and_the_page_says_how_many(
    metastore, people, warehouse, settings
):
    """Four partitions whose destination is another table's directory: the stored preview keeps the first two
    ``directory_in_use`` blockers (the setting) with their count; the page lists two and says there are two more."""
    # given
    settings.CATALOG_PREVIEW_FINDINGS_PER_CODE = 2
    inside_customers = location_of(warehouse / "sales.db" / "customers" / "x")
    statement = f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{inside_customers}' WITH DATA"

    # when
    request = create(people, metastore, statement)
    page = html(signed_in(people["viewer"]).get(detail(request.pk)))

    # then
    assert request.preview["blocker_counts"]["directory_in_use"] == 4
    assert [b["code"] for b in request.preview["blockers"]].count("directory_in_use") == 2
    assert page.count("moving it would move or mix that data") == 2
    assert "… and 2 more <code>directory_in_use</code> blockers (4 in all; the first 2 are listed)." in page


def test_a_change_only_the_consoles_safety_rules_refuse_says_so_and_tags_its_rule(metastore, people, warehouse):
    """A move into another table's directory is the console's containment rule, not Hive's (Hive would run it): the
    heading names the console's safety rules, each blocker is tagged Console · containment, and the legend explains
    both tags."""
    # given
    inside_customers = location_of(warehouse / "sales.db" / "customers" / "x")
    statement = f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{inside_customers}' WITH DATA"

    # when
    page = html(signed_in(people["viewer"]).get(detail(create(people, metastore, statement).pk)))

    # then
    heading = re.search(r'<h3 id="preview-refused-by">([^<]*)</h3>', page).group(1)
    assert unescape(heading) == "Blocked — the console's safety rules refuse this change (Hive itself would run it)"
    assert "Hive would refuse" not in page
    blockers = re.search(r'id="preview-blockers".*?</section>', page, re.DOTALL).group(0)
    tags = set(re.findall(r'data-owner="(\w+)">([^<]*)</span>', blockers))
    assert tags == {("console", "Console · containment")}
    assert 'id="rule-legend"' in page and "Hive would run the change" in unescape(page)


# Audit -------------------------------------------------------------------------------------------------------------


@ON_TWO_METASTORES
def test_the_audit_log_filters_and_exports_as_csv_and_json(metastore, people):
    # given
    request = submitted(people, metastore)
    signed_in(people["approver"]).post(reverse("operations:approve", args=[request.pk]), {"comment": "fine"})
    signed_in(people["steward"]).post(reverse("operations:comment", args=[request.pk]), {"body": "thanks"})
    client = signed_in(people["viewer"])

    # when
    page = html(client.get(reverse("operations:audit")))
    by_approver = html(client.get(reverse("operations:audit"), {"actor": "approver"}))
    exported_csv = client.get(reverse("operations:audit_export", args=["csv"]), {"request": request.pk})
    exported_json = client.get(reverse("operations:audit_export", args=["json"]), {"actor": "approver"})

    # then
    assert re.findall(r'data-action="(\w+)"', page) == ["comment", "approve", "submit", "create"]
    assert re.findall(r'data-action="(\w+)"', by_approver) == ["approve"] and "fine" in by_approver
    assert 'href="/changes/audit/export.csv?actor=approver"' in by_approver
    assert exported_csv["Content-Type"].startswith("text/csv")
    assert exported_csv["Content-Disposition"].startswith('attachment; filename="audit-')
    *rows, anchor = csv.DictReader(io.StringIO(exported_csv.content.decode()))
    assert [row["action"] for row in rows] == ["create", "submit", "approve", "comment"]
    assert all(row["request_id_ref"] == str(request.pk) for row in rows)
    assert anchor["id"].startswith("# chain head ")
    records = json.loads(exported_json.content)["records"]
    assert [r["action"] for r in records] == ["approve"] and records[0]["details"]["comment"] == "fine"
    assert client.get(reverse("operations:audit_export", args=["xml"])).status_code == 400


@ON_TWO_METASTORES
def test_the_table_page_lists_the_tables_change_history(metastore, people):
    # given
    request = submitted(people, metastore, SET_PROPERTY)
    create(people, metastore, "ALTER TABLE sales.orders SET OWNER USER bob")  # another table

    # when
    url = reverse("catalog:table", args=[metastore.name, "sales", "customers"])
    page = html(signed_in(people["viewer"]).get(url))
    steward_page = html(signed_in(people["steward"]).get(url))

    # then
    section = re.search(r'<section class="panel" id="change-history">.*?</section>', page, re.DOTALL).group(0)
    assert re.findall(r'data-action="(\w+)"', section) == ["submit", "create"]
    assert f'href="{detail(request.pk)}"' in section
    assert "SET OWNER" not in section
    assert 'id="request-change"' not in section  # a viewer cannot request changes: no link to a refusal
    assert f"?metastore={metastore.name}&amp;table=sales.customers" in steward_page  # the guided request


@ON_TWO_METASTORES
def test_a_list_row_shows_the_request_escaped_with_its_link_state_risk_and_time(metastore, people):
    """Each row of the lists (built by ``request_row``): the request's link twice, the table, the statement
    escaped in its cell and its title, state and risk badges, approvals, requester, and when it was made (the inbox:
    since when it waits)."""
    # given: a property whose value carries markup and quotes
    statement = "ALTER TABLE sales.customers SET TBLPROPERTIES ('note'='<b onclick=\"x\">it</b> & co')"
    request = submitted(people, metastore, statement)

    # when
    listed = html(signed_in(people["steward"]).get(reverse("operations:list")))
    waiting = html(signed_in(people["approver"]).get(reverse("operations:inbox")))

    # then
    row = re.search(rf'<tr data-request="{request.pk}">.*?</tr>', listed, re.DOTALL).group(0)
    assert row.count(f'href="{detail(request.pk)}"') == 2
    assert f"<strong>#{request.pk}</strong>" in row and ">sales.customers</a>" in row
    assert "<b onclick" not in row and escape(request.statement) in row
    assert f'title="{escape(request.statement)}"' in row
    assert f'<span class="badge info" data-state="submitted">{request.get_state_display()}</span>' in row
    assert f'<span class="badge {"ok" if request.risk == "low" else "warn"}">{request.risk}</span>' in row
    assert f"<td>{request.requester.get_username()}</td>" in row
    assert f">0 / {request.required_approvals}<" in row
    assert f'<td class="nowrap">{timezone.localtime(request.created_at):%Y-%m-%d %H:%M}</td>' in row
    inbox_row = re.search(rf'<tr data-request="{request.pk}">.*?</tr>', waiting, re.DOTALL).group(0)
    assert re.search(r'<td class="nowrap">0\xa0minutes ago</td>', inbox_row), inbox_row
