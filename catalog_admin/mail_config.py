"""
E-mail configuration from the environment: ``EMAIL_URL`` or the ``EMAIL_*`` variables.

``email_settings(env)`` returns the Django settings (``EMAIL_BACKEND``, ``EMAIL_HOST``, …, ``CATALOG_EMAIL_ENABLED``)
that ``catalog_admin.settings`` adopts. Nothing configured means notifications are off. A malformed variable raises
``EmailConfigError`` naming it, and the console does not start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ("EmailConfigError", "email_settings")

SMTP_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
CONSOLE_BACKEND = "django.core.mail.backends.console.EmailBackend"
# EMAIL_URL scheme -> (use TLS, use SSL, default port).
SMTP_SCHEMES: dict[str, tuple[bool, bool, int]] = {
    "smtp": (False, False, 25),
    "smtp+tls": (True, False, 587),
    "smtp+ssl": (False, True, 465),
}
EMAIL_VARIABLES = ("EMAIL_HOST", "EMAIL_PORT", "EMAIL_HOST_USER", "EMAIL_HOST_PASSWORD", "EMAIL_USE_TLS",
                   "EMAIL_USE_SSL")  # fmt: skip


class EmailConfigError(ValueError):
    """An e-mail variable of the environment is malformed."""


def email_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The e-mail settings the environment asks for; ``CATALOG_EMAIL_ENABLED`` is false when none is set."""
    url = env.get("EMAIL_URL", "").strip()
    if url:
        if any(env.get(name, "").strip() for name in EMAIL_VARIABLES):
            raise EmailConfigError("EMAIL_URL and EMAIL_HOST… are both set; set one of them.")
        result = _from_url(url)
    elif env.get("EMAIL_HOST", "").strip():
        result = _from_variables(env)
    else:
        result = {"CATALOG_EMAIL_ENABLED": False}
    sender = env.get("DEFAULT_FROM_EMAIL", "").strip()
    if sender:
        if "@" not in sender:
            raise EmailConfigError(f"DEFAULT_FROM_EMAIL '{sender}' is not an e-mail address.")
        result["DEFAULT_FROM_EMAIL"] = sender
    return result


def _from_url(url: str) -> dict[str, Any]:
    parts = urlsplit(url)
    if parts.scheme == "console":
        return {"CATALOG_EMAIL_ENABLED": True, "EMAIL_BACKEND": CONSOLE_BACKEND}
    if parts.scheme not in SMTP_SCHEMES:
        known = ", ".join([*SMTP_SCHEMES, "console"])
        raise EmailConfigError(f"EMAIL_URL scheme '{parts.scheme}' is not one of {known}.")
    if not parts.hostname:
        raise EmailConfigError("EMAIL_URL names no host.")
    tls, ssl, default_port = SMTP_SCHEMES[parts.scheme]
    try:
        port = parts.port or default_port
    except ValueError as error:
        raise EmailConfigError(f"EMAIL_URL port is not a number: {error}.") from None
    return {
        "CATALOG_EMAIL_ENABLED": True,
        "EMAIL_BACKEND": SMTP_BACKEND,
        "EMAIL_HOST": parts.hostname,
        "EMAIL_PORT": port,
        "EMAIL_HOST_USER": unquote(parts.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(parts.password or ""),
        "EMAIL_USE_TLS": tls,
        "EMAIL_USE_SSL": ssl,
    }


def _from_variables(env: Mapping[str, str]) -> dict[str, Any]:
    tls = _flag(env, "EMAIL_USE_TLS")
    ssl = _flag(env, "EMAIL_USE_SSL")
    if tls and ssl:
        raise EmailConfigError("EMAIL_USE_TLS and EMAIL_USE_SSL are both true; choose one.")
    port_text = env.get("EMAIL_PORT", "").strip()
    if port_text and not (port_text.isdigit() and 0 < int(port_text) < 65536):
        raise EmailConfigError(f"EMAIL_PORT '{port_text}' is not a port number.")
    return {
        "CATALOG_EMAIL_ENABLED": True,
        "EMAIL_BACKEND": SMTP_BACKEND,
        "EMAIL_HOST": env["EMAIL_HOST"].strip(),
        "EMAIL_PORT": int(port_text) if port_text else (465 if ssl else 587 if tls else 25),
        "EMAIL_HOST_USER": env.get("EMAIL_HOST_USER", ""),
        "EMAIL_HOST_PASSWORD": env.get("EMAIL_HOST_PASSWORD", ""),
        "EMAIL_USE_TLS": tls,
        "EMAIL_USE_SSL": ssl,
    }


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise EmailConfigError(f"{name} '{value}' is neither true nor false.")
