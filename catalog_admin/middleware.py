"""Sign-in everywhere, and clear pages (never stack traces) when a metastore cannot be used."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from catalog_admin.errors import ApplicationError

__all__ = ("LoginRequiredMiddleware", "MetastoreErrorMiddleware")

PUBLIC_PREFIXES = ("/accounts/login/", "/static/", "/api/", "/healthz")


class LoginRequiredMiddleware:
    """Every page needs a signed-in user; the API authenticates on its own (tokens or sessions)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.user.is_authenticated and not request.path.startswith(PUBLIC_PREFIXES):
            return redirect_to_login(request.get_full_path())
        return self.get_response(request)


class MetastoreErrorMiddleware:
    """Render an :class:`ApplicationError` raised by a page as an error page with the code's status."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if request.path.startswith("/api/") or not isinstance(exception, ApplicationError):
            return None
        return render(
            request,
            "error.html",
            {"error": exception},
            status=exception.code.http_status,
        )
