"""The signed-in user's API tokens (``/account/tokens/``): list, create (the secret shown once), revoke."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from catalog_admin.auth.tokens import NAME_MAX_LENGTH, IssuedToken, token_issue, token_revoke, user_tokens
from catalog_admin.errors import ApplicationError

__all__ = ("account_token_revoke", "account_tokens")


class TokenForm(forms.Form):
    """Parses the fields; the rules (unique live name, lifetime within the maximum) are the service's."""

    name = forms.CharField(max_length=NAME_MAX_LENGTH, help_text="What will use it, e.g. nightly-sync")
    days = forms.IntegerField(min_value=1, label="Expires after (days)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["days"].initial = settings.CATALOG_API_TOKEN_TTL_DAYS
        self.fields["days"].widget.attrs["max"] = settings.CATALOG_API_TOKEN_MAX_DAYS


@never_cache  # a new token's secret must not stay in any cache
@require_http_methods(["GET", "POST"])
def account_tokens(request: HttpRequest) -> HttpResponse:
    """The user's tokens and the form for a new one; a created token's secret is in this answer only."""
    form = TokenForm(request.POST or None)
    issued: IssuedToken | None = None
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            issued = token_issue(user=_user(request), name=form.cleaned_data["name"], days=form.cleaned_data["days"])
        except ApplicationError as exc:
            field = exc.details.get("parameter")
            form.add_error(field if field in form.fields else None, exc.message)
            status = exc.code.http_status
        else:
            form = TokenForm()
    elif request.method == "POST":
        status = 400
    return render(request, "catalog_admin/account_tokens.html", _context(request, form, issued), status=status)


@require_POST
def account_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        token = token_revoke(user=_user(request), token_id=pk)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Token '{token.name}' revoked; the API refuses it from now on.")
    return redirect("account-tokens")


def _context(request: HttpRequest, form: TokenForm, issued: IssuedToken | None) -> dict[str, Any]:
    now = timezone.now()
    tokens = [(token, token.state(now)) for token in user_tokens(_user(request))]
    return {"form": form, "issued": issued, "tokens": tokens, "max_days": settings.CATALOG_API_TOKEN_MAX_DAYS}


def _user(request: HttpRequest) -> AbstractBaseUser:
    assert isinstance(request.user, AbstractBaseUser), "LoginRequiredMiddleware lets only signed-in users here"
    return request.user
