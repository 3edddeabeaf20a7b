"""Sign-in everywhere, a bounded request body, a Content-Security-Policy, clear pages (never stack traces) when a
metastore cannot be used, and every request's latency for ``/metrics``."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from prometheus_client import Histogram

from catalog_admin.errors import ApplicationError, ErrorCode, metastore_unavailable

__all__ = (
    "ContentSecurityPolicyMiddleware",
    "LoginRequiredMiddleware",
    "MetastoreErrorMiddleware",
    "RequestBodyLimitMiddleware",
    "RequestLatencyMiddleware",
    "api_not_found",
    "error_response",
)

PUBLIC_PREFIXES = ("/accounts/login/", "/accounts/oidc/", "/static/", "/api/", "/health/", "/metrics")

REQUEST_LATENCY = Histogram(
    "catalog_http_request_duration_seconds",
    "Time to answer a request, by route (the URL pattern, or 'unmatched'), method and status class.",
    ("route", "method", "status"),
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)


class RequestLatencyMiddleware:
    """Time every request into :data:`REQUEST_LATENCY`; the route, not the path, so labels stay few."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = request.resolver_match
        route = match.route if match is not None else "unmatched"
        status = f"{response.status_code // 100}xx"
        REQUEST_LATENCY.labels(route, request.method or "", status).observe(time.perf_counter() - started)
        return response


class LoginRequiredMiddleware:
    """Every page needs a signed-in user; the API authenticates on its own (tokens or sessions)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.user.is_authenticated and not request.path.startswith(PUBLIC_PREFIXES):
            return redirect_to_login(request.get_full_path())
        return self.get_response(request)


class ContentSecurityPolicyMiddleware:
    """Send ``settings.CONTENT_SECURITY_POLICY`` with every response that does not set a policy of its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


class MetastoreErrorMiddleware:
    """Render an :class:`ApplicationError` raised by a page as an error page with the code's status."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith("/api/") and _holds_nul(request):
            # PostgreSQL cannot compare a text holding NUL: refuse it here rather than fail in a query.
            error = ApplicationError(ErrorCode.INVALID_PARAMETER, "The address holds a NUL (0x00) character.")
            return render(request, "error.html", {"error": error}, status=400)
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if request.path.startswith("/api/"):
            return None
        if isinstance(exception, OperationalError | InterfaceError):
            # A metastore that went away after its schema version was cached: still a 503, not a 500.
            exception = metastore_unavailable(exception, _metastore_of(request))
        if not isinstance(exception, ApplicationError):
            return None
        return render(request, "error.html", {"error": exception}, status=exception.code.http_status)


class RequestBodyLimitMiddleware:
    """Refuse a body larger than ``DATA_UPLOAD_MAX_MEMORY_SIZE`` with ``413 payload_too_large``, before it is read.

    Django checks the limit only for the form fields it parses itself, as a 400 (and DRF reads a JSON body past it),
    so the declared ``Content-Length`` is checked here, for pages and the API alike.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and _content_length(request) > limit:
            error = ApplicationError(
                ErrorCode.PAYLOAD_TOO_LARGE,
                f"The request body is larger than {limit} bytes.",
                {"max_bytes": limit},
            )
            return error_response(request, error)
        return self.get_response(request)


def error_response(request: HttpRequest, error: ApplicationError) -> HttpResponse:
    """The error as JSON under /api/, as the error page elsewhere; with the code's status."""
    if request.path.startswith("/api/"):
        return JsonResponse(error.as_dict(), status=error.code.http_status)
    return render(request, "error.html", {"error": error}, status=error.code.http_status)


def _content_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _holds_nul(request: HttpRequest) -> bool:
    return "\x00" in request.path or any("\x00" in k or "\x00" in v for k, v in request.GET.items())


def _metastore_of(request: HttpRequest) -> str | None:
    """The metastore a page is about (its ``<metastore>`` route argument), if any."""
    match = request.resolver_match
    return match.kwargs.get("metastore") if match else None


def api_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: JSON under /api/, the 404 page elsewhere."""
    if request.path.startswith("/api/"):
        error = ApplicationError(ErrorCode.NOT_FOUND, f"No API endpoint at {request.path}.", {"path": request.path})
        return JsonResponse(error.as_dict(), status=404)
    return render(request, "404.html", {"request_path": request.path}, status=404)
