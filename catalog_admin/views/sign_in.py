"""The sign-in page (a password form when local accounts or a directory are on, a button when OpenID Connect is),
and the OpenID Connect flow's two steps, answered 404 while it is not configured."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import Http404, HttpRequest, HttpResponse
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

__all__ = ("SignInView", "oidc_callback", "oidc_start")


class SignInView(auth_views.LoginView):
    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["password_sign_in"] = getattr(settings, "CATALOG_PASSWORD_SIGN_IN", True)
        context["oidc_enabled"] = getattr(settings, "CATALOG_OIDC_ENABLED", False)
        context["oidc_name"] = getattr(settings, "CATALOG_OIDC_NAME", "")
        context["oidc_failed"] = self.request.GET.get("sso") == "failed"
        return context


def oidc_start(request: HttpRequest) -> HttpResponse:
    """Send the browser to the provider (state, nonce and PKCE kept in the session)."""
    _require_oidc()
    return OIDCAuthenticationRequestView.as_view()(request)


def oidc_callback(request: HttpRequest) -> HttpResponse:
    """The provider's answer: the code exchanged, the ID token checked, the user signed in (or sent back)."""
    _require_oidc()
    return OIDCAuthenticationCallbackView.as_view()(request)


def _require_oidc() -> None:
    if not getattr(settings, "CATALOG_OIDC_ENABLED", False):
        raise Http404("OpenID Connect sign-in is not configured on this console.")
