"""E-mail settings from the environment: EMAIL_URL or EMAIL_*, none = off, a malformed variable named."""

from __future__ import annotations

import pytest

from catalog_admin.mail_config import CONSOLE_BACKEND, SMTP_BACKEND, EmailConfigError, email_settings


def test_nothing_configured_turns_mail_off() -> None:
    assert email_settings({}) == {"CATALOG_EMAIL_ENABLED": False}


def test_an_smtp_tls_url_gives_host_port_credentials_and_tls() -> None:
    result = email_settings({"EMAIL_URL": "smtp+tls://alice:p%40ss@mail.example.com:2525"})

    assert result == {
        "CATALOG_EMAIL_ENABLED": True,
        "EMAIL_BACKEND": SMTP_BACKEND,
        "EMAIL_HOST": "mail.example.com",
        "EMAIL_PORT": 2525,
        "EMAIL_HOST_USER": "alice",
        "EMAIL_HOST_PASSWORD": "p@ss",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
    }


def test_an_ssl_url_without_port_uses_465_and_console_uses_the_console_backend() -> None:
    ssl = email_settings({"EMAIL_URL": "smtp+ssl://mail.example.com"})
    console = email_settings({"EMAIL_URL": "console://", "DEFAULT_FROM_EMAIL": "catalog@example.com"})

    assert (ssl["EMAIL_PORT"], ssl["EMAIL_USE_SSL"]) == (465, True)
    assert console == {
        "CATALOG_EMAIL_ENABLED": True,
        "EMAIL_BACKEND": CONSOLE_BACKEND,
        "DEFAULT_FROM_EMAIL": "catalog@example.com",
    }


def test_the_email_variables_give_the_same_settings() -> None:
    result = email_settings({"EMAIL_HOST": "mail.example.com", "EMAIL_USE_TLS": "true", "EMAIL_HOST_USER": "bob"})

    assert (result["EMAIL_HOST"], result["EMAIL_PORT"], result["EMAIL_USE_TLS"]) == ("mail.example.com", 587, True)
    assert result["EMAIL_HOST_USER"] == "bob"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"EMAIL_URL": "imap://mail.example.com"}, "EMAIL_URL scheme 'imap'"),
        ({"EMAIL_URL": "smtp://"}, "EMAIL_URL names no host"),
        ({"EMAIL_URL": "smtp://mail.example.com:port"}, "EMAIL_URL port"),
        ({"EMAIL_URL": "smtp://a", "EMAIL_HOST": "b"}, "EMAIL_URL and EMAIL_HOST"),
        ({"EMAIL_HOST": "a", "EMAIL_PORT": "99999"}, "EMAIL_PORT '99999'"),
        ({"EMAIL_HOST": "a", "EMAIL_USE_TLS": "maybe"}, "EMAIL_USE_TLS 'maybe'"),
        ({"EMAIL_HOST": "a", "EMAIL_USE_TLS": "1", "EMAIL_USE_SSL": "1"}, "EMAIL_USE_TLS and EMAIL_USE_SSL"),
        ({"DEFAULT_FROM_EMAIL": "nobody"}, "DEFAULT_FROM_EMAIL 'nobody'"),
    ],
)
def test_a_malformed_variable_is_named(env: dict[str, str], named: str) -> None:
    with pytest.raises(EmailConfigError, match=named):
        email_settings(env)
