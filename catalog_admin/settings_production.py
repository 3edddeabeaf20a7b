"""
Production settings: the console's settings, hardened, for ``DJANGO_SETTINGS_MODULE=catalog_admin.settings_production``.

Read from the environment (see README, "Production"):

* ``DJANGO_SECRET_KEY`` (required): the console refuses to start without it;
* ``DJANGO_ALLOWED_HOSTS`` (required): the host names the console answers to, comma-separated;
* ``DATABASE_URL`` (required): the console's own state, on PostgreSQL (``postgres://user@host:5432/catalog_admin``);
* ``DJANGO_SECURE_SSL_REDIRECT`` (default ``1``): redirect plain HTTP to HTTPS; set ``0`` when the proxy does it;
* ``DJANGO_SECURE_PROXY_SSL_HEADER`` (default ``HTTP_X_FORWARDED_PROTO``): the header by which the TLS-terminating
  proxy says a request came over HTTPS;
* ``DJANGO_HSTS_SECONDS`` (default one year).

Static files are collected (``manage.py collectstatic``) into ``STATIC_ROOT`` with hashed, compressed names and served
by WhiteNoise; ``manage.py check --deploy`` is clean under these settings (tests/catalog_admin/test_deployment.py).
"""

import os

from django.core.exceptions import ImproperlyConfigured

from catalog_admin.settings import *  # noqa: F403 (the base settings, overridden below)
from catalog_admin.settings import DATABASES


def _required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(f"{name} must be set in production (catalog_admin.settings_production).")
    return value


DEBUG = False
SECRET_KEY = _required("DJANGO_SECRET_KEY")
ALLOWED_HOSTS = [host.strip() for host in _required("DJANGO_ALLOWED_HOSTS").split(",") if host.strip()]
_required("DATABASE_URL")
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

SECURE_SSL_REDIRECT = os.environ.get("DJANGO_SECURE_SSL_REDIRECT", "1") == "1"
SECURE_PROXY_SSL_HEADER = (os.environ.get("DJANGO_SECURE_PROXY_SSL_HEADER", "HTTP_X_FORWARDED_PROTO"), "https")
# /health/ answers plain HTTP, for load balancers and container probes that do not speak TLS.
SECURE_REDIRECT_EXEMPT = [r"^health/$"]
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", str(365 * 24 * 3600)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = os.environ.get("DJANGO_HSTS_PRELOAD", "0") == "1"
# Preloading is a decision for the domain's owner (a submission to the browsers' list, hard to undo), not a default:
# without DJANGO_HSTS_PRELOAD=1 the check that asks for it is silenced, every other deployment check stays on.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SECURE = True
X_FRAME_OPTIONS = "DENY"

WHITENOISE_USE_FINDERS = False
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
