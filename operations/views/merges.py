"""The merge wizard: source, target, databases, renames and location rules → the live merge preview → a draft change
request on the target (then the request page: submit, approvals, execution as a job, result, revert)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from catalog_admin.errors import ApplicationError
from operations.changes import change_kind
from operations.forms import MergeForm
from operations.policy import can_request
from operations.services.change_requests import change_request_create

__all__ = ("merge_new", "merge_preview_partial")


@require_http_methods(["GET", "POST"])
def merge_new(request: HttpRequest) -> HttpResponse:
    """The wizard; POST saves the merge as a draft request and goes to its page."""
    allowed = can_request(request.user)
    form = MergeForm(request.POST or None, initial={"source": request.GET.get("source", "")})
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                created = change_request_create(
                    user=request.user, operation=form.cleaned_data["operation"], reason=form.cleaned_data["reason"]
                )
            except ApplicationError as exc:
                form.add_error(None, exc.message)
            else:
                messages.success(request, f"Draft #{created.pk} saved. Check the merge preview, then submit it.")
                return redirect("operations:detail", pk=created.pk)
        status = 403 if not allowed else 400
    context = {"form": form, "allowed": allowed, "live": _live(form) if form.is_bound else {"empty": True}}
    return render(request, "operations/merge_form.html", context, status=status)


@require_POST
def merge_preview_partial(request: HttpRequest) -> HttpResponse:
    """The live merge preview of the wizard's fields (htmx), or the error naming what is wrong."""
    return render(request, "operations/htmx/merge_preview.html", {"live": _live(MergeForm(request.POST))})


def _live(form: MergeForm) -> dict[str, Any]:
    if not form.is_valid():
        return {"errors": [e for errors in form.errors.values() for e in errors]}
    try:
        operation = form.cleaned_data["operation"]
        return {"m": change_kind(operation).preview(None, operation).as_dict()}
    except ApplicationError as exc:
        return {"errors": [exc.message]}
