"""
A real deployment: the production settings pass ``manage.py check --deploy``, WhiteNoise serves the static files,
and ``GET /health/`` answers 200 when every database answers, 503 naming the one that does not.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from tests.fixtures.factories import make_user

REPO_ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_ENV = {
    "DJANGO_SETTINGS_MODULE": "catalog_admin.settings_production",
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "DJANGO_ALLOWED_HOSTS": "console.example.com",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/catalog_admin",
}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "METASTORE"))}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO_ROOT, env={**clean, **env}, capture_output=True, text=True
    )


def test_check_deploy_is_clean_under_the_production_settings() -> None:
    """No deployment warning at all: DEBUG off, a real secret key, HTTPS, HSTS, secure cookies."""
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)

    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_the_base_settings_do_not_pass_check_deploy() -> None:
    """The check is a real one: the development settings (no HTTPS, no HSTS, cookies in clear) fail it."""
    development = {"DJANGO_SETTINGS_MODULE": "catalog_admin.settings"}

    result = manage("check", "--deploy", "--fail-level", "WARNING", env=development)

    assert result.returncode != 0
    assert "security.W004" in result.stderr  # SECURE_HSTS_SECONDS


@pytest.mark.parametrize("missing", ["DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS", "DATABASE_URL"])
def test_production_refuses_to_start_without_a_required_variable(missing: str) -> None:
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != missing}

    result = manage("check", env=env)

    assert result.returncode != 0
    assert f"{missing} must be set in production" in result.stderr


@pytest.mark.django_db(databases="__all__")
def test_whitenoise_serves_the_static_files(client: Client) -> None:
    response = client.get("/static/css/console.css")

    assert response.status_code == 200
    assert b"".join(response.streaming_content)  # type: ignore[attr-defined]


@pytest.mark.django_db(databases="__all__")
def test_health_is_200_when_the_console_and_every_metastore_answer(client: Client, settings) -> None:
    # given
    client.force_login(make_user("health-admin", "admin"))

    # when
    response = client.get("/health/")

    # then
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "ok"
    assert body["failing"] == []
    assert [c["name"] for c in body["checks"]] == ["console", *(c.name for c in settings.METASTORE_CONFIGS)]
    assert all(c["ok"] for c in body["checks"])


@pytest.mark.django_db(databases="__all__")
def test_health_is_503_naming_a_metastore_on_a_closed_port_only_to_admins_and_the_metrics_token(
    client: Client, register_metastore, settings
) -> None:
    """Anonymous probes and viewers get the overall status only; an admin and the metrics token get each check."""
    # given
    register_metastore("offline", "postgresql://postgres@127.0.0.1:1/nowhere")
    settings.CATALOG_METRICS_TOKEN = "health-token-" + "y" * 20

    # when
    anonymous = client.get("/health/")
    with_token = client.get("/health/", HTTP_AUTHORIZATION=f"Bearer {settings.CATALOG_METRICS_TOKEN}")
    client.force_login(make_user("health-viewer", "viewer"))
    viewer = client.get("/health/")
    client.force_login(make_user("health-admin", "admin"))
    admin = client.get("/health/")

    # then
    assert [r.status_code for r in (anonymous, with_token, viewer, admin)] == [503] * 4
    assert anonymous.json() == {"status": "unavailable"}  # no metastore named to anonymous probes
    assert viewer.json() == {"status": "unavailable"}
    for detailed in (with_token, admin):
        assert detailed.json()["failing"] == ["offline"]
        offline = next(c for c in detailed.json()["checks"] if c["name"] == "offline")
        assert offline["ok"] is False
        assert "127.0.0.1" in offline["error"] or "refused" in offline["error"].lower()
        assert all(c["ok"] for c in detailed.json()["checks"] if c["name"] != "offline")
