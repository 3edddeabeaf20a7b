"""
The pages of one change request: the new-request form with its live preview, the request page with its
actions, the confirmation before execution, and the job progress the request page polls.

Views are thin: they read through ``operations.selectors``, act through ``operations.services.change_requests``
and show an :class:`~catalog_admin.errors.ApplicationError`'s message as it is (the API answers with the same
words). Actions are POST-redirect-GET with a flash message; a refused action changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import get_metastore
from catalog_admin.utils.htmx import htmx_partial
from operations.changes import change_kind
from operations.choices import OPEN_STATES, ChangeRequestState
from operations.ddl.parser import SUPPORTED_STATEMENTS, parse_alter
from operations.forms import ChangeRequestForm, ExecuteForm
from operations.guided import guided_operations, initial_statement
from operations.models import ChangeRequest, Job
from operations.policy import can_request
from operations.selectors import (
    change_request_actions,
    get_change_request,
    latest_job_of_request,
    request_history,
)
from operations.services.alter import alter_preview_statement
from operations.services.change_requests import (
    change_request_approve,
    change_request_cancel,
    change_request_comment,
    change_request_create,
    change_request_execute,
    change_request_refresh,
    change_request_reject,
    change_request_revert,
    change_request_revise,
    change_request_submit,
    change_request_update,
    settle_stuck_request,
)
from operations.views.display import Freshness, check_freshness, freshness_from_error, preview_display

__all__ = (
    "change_request_approve_view",
    "change_request_cancel_view",
    "change_request_comment_view",
    "change_request_detail",
    "change_request_edit",
    "change_request_execute_view",
    "change_request_freshness",
    "change_request_job",
    "change_request_new",
    "change_request_preview_partial",
    "change_request_refresh_view",
    "change_request_reject_view",
    "change_request_revert_view",
    "change_request_revise_view",
    "change_request_schedule_view",
    "change_request_settle_view",
    "change_request_submit_view",
)

POLL_DONE = 286  # htmx stops polling on this status


# The request form and its live preview -----------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def change_request_new(request: HttpRequest) -> HttpResponse:
    """A draft request from a metastore and a Hive statement; the preview follows the form as it is typed."""
    allowed = can_request(request.user)
    if request.method == "POST":
        form = ChangeRequestForm(request.POST)
        if not form.is_valid():
            if not allowed:
                form.add_error(None, allowed.reason)
        else:  # the service refuses a viewer with the same words, and audits the refusal
            try:
                created = change_request_create(
                    user=request.user,
                    metastore=form.cleaned_data["metastore"],
                    spec=form.cleaned_data["spec"],
                    reason=form.cleaned_data["reason"],
                )
            except ApplicationError as exc:
                form.add_error(None, exc.message)
            else:
                messages.success(request, f"Draft #{created.pk} saved. Check the preview, then submit it.")
                return redirect("operations:detail", pk=created.pk)
        status = 403 if not allowed else 400
        guide = _guide(form.data.get("metastore", ""), request.POST.get("table", ""), "")
    else:
        metastore = request.GET.get("metastore") or settings.DEFAULT_METASTORE
        guide = _guide(metastore, request.GET.get("table", ""), request.GET.get("operation", ""))
        statement = request.GET.get("statement") or initial_statement(guide["operations"], guide["chosen"])
        form = ChangeRequestForm(
            initial={"metastore": metastore, "statement": statement, "reason": request.GET.get("reason", "")}
        )
        status = 200
    context = {"form": form, "allowed": allowed, "live": _live_preview(_form_values(form)), "editing": None,
               "supported": SUPPORTED_STATEMENTS, "guide": guide}  # fmt: skip
    return render(request, "operations/change_request_form.html", context, status=status)


def _guide(metastore: str, table: str, operation: str) -> dict[str, Any]:
    """The guided request's picker for ``table`` (``db.name``) on ``metastore``: its operations and the chosen one."""
    if not table:
        return {"table": "", "operations": (), "chosen": ""}
    try:
        operations = guided_operations(get_metastore(metastore or None), table)
    except ApplicationError:
        operations = ()
    chosen = operation if any(op.key == operation for op in operations) else (operations[0].key if operations else "")
    return {"table": table, "metastore": metastore, "operations": operations, "chosen": chosen}


@require_http_methods(["GET", "POST"])
def change_request_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Edit a draft: a new statement or reason, and a new preview."""
    change = get_change_request(pk)
    allowed = change_request_actions(change, request.user)["edit"]
    status = 200
    if request.method == "POST":
        form = ChangeRequestForm(request.POST)
        if not form.is_valid():
            if not allowed:
                form.add_error(None, allowed.reason)
        else:  # the service refuses with the lifecycle's words, and audits the refusal
            try:
                change_request_update(
                    request=change,
                    user=request.user,
                    spec=form.cleaned_data["spec"],
                    reason=form.cleaned_data["reason"],
                    metastore=form.cleaned_data["metastore"],
                )
            except ApplicationError as exc:
                form.add_error(None, exc.message)
                status = exc.code.http_status
            else:
                messages.success(request, f"Draft #{change.pk} updated.")
                return redirect("operations:detail", pk=change.pk)
        if not allowed:
            status = allowed.code.http_status
        elif status == 200:
            status = 400
    else:
        form = ChangeRequestForm(
            initial={"metastore": change.metastore, "statement": change.statement, "reason": change.reason}
        )
    context = {"form": form, "allowed": allowed, "live": _live_preview(_form_values(form)), "editing": change,
               "supported": SUPPORTED_STATEMENTS}  # fmt: skip
    return render(request, "operations/change_request_form.html", context, status=status)


@require_POST
def change_request_preview_partial(request: HttpRequest) -> HttpResponse:
    """The live preview of the form's statement (htmx: the statement's ``input changed delay:500ms`` and the
    metastore's ``change``; typing the reason, or leaving the statement, does not re-run it); errors are in it."""
    values = {"metastore": request.POST.get("metastore", ""), "statement": request.POST.get("statement", "")}
    return render(request, "operations/htmx/preview.html", {"live": _live_preview(values)})


def _form_values(form: ChangeRequestForm) -> dict[str, str]:
    if form.is_bound:
        return {"metastore": form.data.get("metastore", ""), "statement": form.data.get("statement", "")}
    return {"metastore": form.initial.get("metastore", ""), "statement": form.initial.get("statement", "")}


def _live_preview(values: dict[str, str]) -> dict[str, Any]:
    """The preview of a statement being typed: the display, or the parse error (with a caret), or the error."""
    statement = values.get("statement", "").strip()
    if not statement:
        return {"empty": True}
    try:
        metastore = get_metastore(values.get("metastore") or None)
        operation = parse_alter(statement, version=metastore.schema.version).as_dict()
        kind = change_kind(operation)
        if not kind.on_one_table:  # a database statement (issue 27): its kind's plan and template
            return {"plan": kind.preview(metastore.name, operation).as_dict(), "plan_template": kind.plan_template}
        preview = alter_preview_statement(metastore=metastore, statement=statement)
    except ApplicationError as exc:
        live: dict[str, Any] = {"error": exc}
        if exc.code == ErrorCode.DDL_PARSE_ERROR:
            line, column = exc.details.get("line", 1), exc.details.get("column", 1)
            lines = statement.splitlines() or [""]
            live["parse"] = {
                "line": line,
                "column": column,
                "text": lines[min(line, len(lines)) - 1],
                "caret": " " * (column - 1) + "^",
                "supported": exc.details.get("supported", []),
            }
        return live
    return {"pv": preview_display(preview.as_dict())}


# The request page ---------------------------------------------------------------------------------------------------


@require_GET
def change_request_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Everything about one request, and the actions the signed-in user may take (disabled ones say why)."""
    job = latest_job_of_request(pk)  # before the request: see latest_job_of_request
    change = get_change_request(pk)
    context = _detail_context(request, change, job, Freshness())
    context["check_freshness"] = change.state in OPEN_STATES  # on demand: the page loads the check after itself
    return render(request, "operations/change_request.html", context)


@require_GET
def change_request_freshness(request: HttpRequest, pk: int) -> HttpResponse:
    """Whether the open request's plan still holds (one preview, loaded by htmx after the page); when it does not,
    what changed, with the actions swapped in out of band (approval and execution wait for a refresh)."""
    change = get_change_request(pk)
    freshness = check_freshness(change)
    context = {"change": change, "freshness": freshness, "oob": freshness.stale and htmx_partial(request)}
    context["actions"] = change_request_actions(change, request.user, stale=freshness.stale)
    return render(request, "operations/htmx/freshness.html", context)


def _detail_context(
    request: HttpRequest, change: ChangeRequest, job: Job | None, freshness: Freshness
) -> dict[str, Any]:
    execution = change.execution
    kind = change_kind(change.operation)  # its templates render what the request stores
    actual = execution.actual_counts if execution else None
    return {
        "change": change,
        "plan_template": kind.plan_template,
        "subject_template": kind.subject_template,
        "pv": preview_display(change.preview, policy=change.policy, actual=actual) if kind.on_one_table else None,
        "freshness": freshness,
        "actions": change_request_actions(change, request.user, stale=freshness.stale),
        "approvals": list(change.approvals.all()),
        "approvals_given": change.approvals_given,
        "comments": list(change.comments.all()),
        "history": request_history(change),
        "job": job,
        "execution": execution,
        "polling": job is not None and not job.is_done,
    }


def _act(request: HttpRequest, pk: int, act: Callable[[ChangeRequest], str | tuple[str, int]]) -> HttpResponse:
    """Run one transition and go back to the request page (or to the request it created) with its message; a form
    on another page of the console (the home page) names it in ``next`` to come back there."""
    change = get_change_request(pk)
    target = change.pk
    try:
        outcome = act(change)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        message, target = outcome if isinstance(outcome, tuple) else (outcome, change.pk)
        messages.success(request, message)
    back = request.POST.get("next", "")
    if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=False):
        return redirect(back)
    return redirect("operations:detail", pk=target)


@require_POST
def change_request_submit_view(request: HttpRequest, pk: int) -> HttpResponse:
    def act(change: ChangeRequest) -> str:
        done = change_request_submit(request=change, user=request.user)
        return f"Request #{done.pk} submitted: it needs {done.required_approvals} approval(s)."

    return _act(request, pk, act)


@require_POST
def change_request_approve_view(request: HttpRequest, pk: int) -> HttpResponse:
    def act(change: ChangeRequest) -> str:
        done = change_request_approve(request=change, user=request.user, comment=request.POST.get("comment", ""))
        if done.state == ChangeRequestState.APPROVED:
            return f"Request #{done.pk} is approved and can be executed."
        return f"Approval recorded: {done.approvals_given} of {done.required_approvals}."

    return _act(request, pk, act)


@require_POST
def change_request_reject_view(request: HttpRequest, pk: int) -> HttpResponse:
    def act(change: ChangeRequest) -> str:
        change_request_reject(request=change, user=request.user, comment=request.POST.get("comment", ""))
        return f"Request #{change.pk} rejected."

    return _act(request, pk, act)


@require_POST
def change_request_refresh_view(request: HttpRequest, pk: int) -> HttpResponse:
    def act(change: ChangeRequest) -> str:
        done = change_request_refresh(request=change, user=request.user)
        if done.fingerprint == change.fingerprint:
            return f"The preview of request #{done.pk} was refreshed: nothing changed, it stays {done.state}."
        if change.state == ChangeRequestState.DRAFT:
            return f"The preview of draft #{done.pk} was refreshed."
        return f"The preview of request #{done.pk} was refreshed: approvals given on the old preview lapsed."

    return _act(request, pk, act)


@require_POST
def change_request_revise_view(request: HttpRequest, pk: int) -> HttpResponse:
    """The requester takes a rejected request back as a draft and goes on to edit it (new statement, reason and
    preview), then submits it again; the rejection stays in its history."""
    try:
        done = change_request_revise(request=get_change_request(pk), user=request.user)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect("operations:detail", pk=pk)
    messages.success(request, f"Request #{done.pk} is a draft again: revise it, then submit it.")
    return redirect("operations:edit", pk=done.pk)


@require_POST
def change_request_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    def act(change: ChangeRequest) -> str:
        change_request_cancel(request=change, user=request.user)
        return f"Request #{change.pk} cancelled."

    return _act(request, pk, act)


@require_POST
def change_request_revert_view(request: HttpRequest, pk: int) -> HttpResponse:
    def act(change: ChangeRequest) -> tuple[str, int]:
        revert = change_request_revert(request=change, user=request.user, reason=request.POST.get("reason", ""))
        return f"Revert request #{revert.pk} drafted: check its preview, then submit it.", revert.pk

    return _act(request, pk, act)


@require_POST
def change_request_comment_view(request: HttpRequest, pk: int) -> HttpResponse:
    def act(change: ChangeRequest) -> str:
        change_request_comment(request=change, user=request.user, body=request.POST.get("body", ""))
        return "Comment added."

    return _act(request, pk, act)


@require_POST
def change_request_settle_view(request: HttpRequest, pk: int) -> HttpResponse:
    """An admin ends a request stuck executing (its job no longer alive) as succeeded or failed, saying why."""

    def act(change: ChangeRequest) -> str:
        outcome = request.POST.get("outcome", "")
        done = settle_stuck_request(change, request.user, outcome, request.POST.get("reason", ""))
        return f"Request #{done.pk} was settled as {done.state}."

    return _act(request, pk, act)


# Confirm, then execute or schedule ----------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def change_request_execute_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Repeat the preview, ask for an explicit confirmation, then execute as a background job."""
    return _confirm(request, pk, schedule=False)


@require_http_methods(["GET", "POST"])
def change_request_schedule_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Like execution, for a time in the future (``manage.py run_jobs`` starts it then)."""
    return _confirm(request, pk, schedule=True)


def _confirm(request: HttpRequest, pk: int, *, schedule: bool) -> HttpResponse:
    change = get_change_request(pk)
    # A POST previews once, in the service (which refuses a stale plan and says what changed); a GET checks here.
    freshness = check_freshness(change) if request.method == "GET" else Freshness()
    form = ExecuteForm(request.POST if request.method == "POST" else None, schedule=schedule)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                done = change_request_execute(request=change, user=request.user, at=form.cleaned_data.get("at"))
            except ApplicationError as exc:
                form.add_error(None, exc.message)
                status = exc.code.http_status
                freshness = freshness_from_error(exc) or freshness
            else:
                if done.state == ChangeRequestState.SCHEDULED:
                    messages.success(
                        request, f"Request #{done.pk} is scheduled for {done.scheduled_for:%Y-%m-%d %H:%M} UTC."
                    )
                else:
                    job = done.jobs.first()
                    messages.success(request, f"Executing request #{done.pk} as job #{job.pk if job else '?'}.")
                return redirect("operations:detail", pk=done.pk)
        else:
            status = 400
    allowed = change_request_actions(change, request.user, stale=freshness.stale)["schedule" if schedule else "execute"]
    context = {
        "change": change,
        "pv": preview_display(change.preview, policy=change.policy),
        "freshness": freshness,
        "allowed": allowed,
        "form": form,
        "schedule": schedule,
    }
    return render(request, "operations/change_request_execute.html", context, status=status)


# Job progress (polled) ----------------------------------------------------------------------------------------------


@require_GET
def change_request_job(request: HttpRequest, pk: int) -> HttpResponse:
    """The progress of the request's latest job; answers 286 once it is finished, so htmx stops polling.

    When the job is done, the state badge and the actions are swapped in out of band.
    """
    job = latest_job_of_request(pk)  # before the request: see latest_job_of_request
    change = get_change_request(pk)
    done = job is None or job.is_done
    context = {
        "change": change,
        "job": job,
        "execution": change.execution,
        "pv": preview_display(
            change.preview,
            policy=change.policy,
            actual=change.execution.actual_counts if change.execution else None,
        ),
        "polling": not done,
        "oob": done and htmx_partial(request),
    }
    if context["oob"]:
        context["actions"] = change_request_actions(change, request.user)
        context["history"] = request_history(change)
    response = render(request, "operations/htmx/job_progress.html", context)
    if done:
        response.status_code = POLL_DONE
    return response
