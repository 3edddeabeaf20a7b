"""Shared set-up for the benchmarks: a PostgreSQL metastore with an official Hive schema, seeded at scale."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CATALOG_ADMIN_SHARED") or REPO.parent / "shared")
SCRIPTS = {
    "2.3.0": "2.3.0/hive-schema-2.3.0.postgres.sql",
    "3.1.0": "3.1.0/hive-schema-3.1.0.postgres.sql",
    "4.0.0": "4.0.0-derived/hive-schema-4.0.0-derived.postgres.sql",
}


def recreate_metastore(database: str, version: str) -> None:
    """Drop and create ``database`` on the local PostgreSQL and load Hive's official schema into it."""
    script = SHARED / "fixtures" / "hive-schema" / SCRIPTS[version]
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-q"]
    drop, create = f"DROP DATABASE IF EXISTS {database} WITH (FORCE)", f"CREATE DATABASE {database}"
    subprocess.run([*psql, "-d", "postgres", "-c", drop, "-c", create], check=True, capture_output=True)
    subprocess.run([*psql, "-d", database, "-f", script.name], cwd=script.parent, check=True, capture_output=True)


def setup_django(metastores: str) -> None:
    os.environ["METASTORES"] = metastores
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalog_admin.settings")
    os.environ.setdefault("CATALOG_ADMIN_VAR", str(REPO / "var" / "bench"))
    # The console's own state is scratch here: start from a fresh SQLite file, migrated below.
    (Path(os.environ["CATALOG_ADMIN_VAR"]) / "console.sqlite3").unlink(missing_ok=True)
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "testserver,localhost")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


PREVIEW_AT_COMMIT = """
import json, os, sys, time
sys.path.insert(0, os.getcwd())
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from catalog_admin.selectors.metastores import get_metastore
from operations.services.alter import alter_preview_statement
samples = []
for _ in range(int(sys.argv[3]) if len(sys.argv) > 3 else 1):
    started = time.perf_counter()
    plan = alter_preview_statement(metastore=get_metastore(sys.argv[1]), statement=sys.argv[2])
    samples.append((time.perf_counter() - started) * 1000)
print(json.dumps([samples[0], plan.partitions_touched, len(plan.blockers), plan.fingerprint, samples]))
"""


def preview_at_commit(commit: str, alias: str, metastores: str, statement: str) -> tuple[float, int, int, str]:
    """One preview of ``statement`` by the code of ``commit`` (extracted once under ``var/bench`` with ``git
    archive``), in a child process on the same metastores: its ms, partitions touched, blockers and fingerprint."""
    samples, touched, blockers, fingerprint = previews_in_child(code_at(commit), alias, metastores, statement, 1)
    return samples[0], touched, blockers, fingerprint


def previews_in_child(
    code: Path, alias: str, metastores: str, statement: str, runs: int
) -> tuple[list[float], int, int, str]:
    """``runs`` previews of ``statement`` one after the other in a new process running the code in ``code`` (this
    checkout, or :func:`code_at` a commit), on the same metastores: each one's ms (the first in a new process, the
    others with its caches warm), partitions touched, blockers and fingerprint. Every code compared is measured
    the same way."""
    env = {
        **os.environ,
        "CATALOG_ADMIN_VAR": str(code / "var" if code != REPO else REPO / "var" / "bench" / "this-code"),
        "METASTORES": metastores,
        "DJANGO_SETTINGS_MODULE": "catalog_admin.settings",
    }
    Path(env["CATALOG_ADMIN_VAR"]).mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-c", PREVIEW_AT_COMMIT, alias, statement, str(runs)]
    output = subprocess.run(command, cwd=code, env=env, check=True, capture_output=True, text=True).stdout
    _first, touched, blockers, fingerprint, samples = json.loads(output.strip().splitlines()[-1])
    return samples, touched, blockers, fingerprint


def code_at(commit: str) -> Path:
    """The code of ``commit``, extracted once under ``var/bench/before-<commit>`` with ``git archive``."""
    folder = REPO / "var" / "bench" / f"before-{commit}"
    if not folder.exists():
        folder.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", commit], cwd=REPO, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def timed(label: str, action: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = action()
    seconds = time.perf_counter() - started
    print(f"{label}: {seconds:.2f} s", flush=True)
    return seconds, result


def median_ms(action: Callable[[], object], runs: int = 7) -> float:
    """Median wall time of ``action`` in milliseconds, after one warm-up run."""
    action()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def write_section(path: Path, title: str, body: str) -> None:
    """Replace (or append) the ``## title`` section of a markdown file."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    marker = f"## {title}\n"
    if marker in text:
        start = text.index(marker)
        end = text.find("\n## ", start + len(marker))
        text = text[:start] + text[end + 1 :] if end != -1 else text[:start]
    path.write_text(text.rstrip() + "\n\n" + marker + body.rstrip() + "\n")
