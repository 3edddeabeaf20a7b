"""
The console's own database on SQLite (the default, ``DATABASE_URL=sqlite:///…``) takes concurrent writers: every
transaction begins IMMEDIATE (it takes the write lock at once, instead of failing with ``database is locked`` when it
upgrades a read lock another writer blocks) and waits up to 20 s for it. Approvals racing each other all get their
answer and all are recorded (before, most of eight simultaneous approvals answered 500 and were lost).

The suite's own console database is PostgreSQL, so the race runs in a process of its own with the production
settings (``sqlite_console_race.py``), on a fresh SQLite console database and a copy of the SQLite metastore.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

RACE = Path(__file__).with_name("sqlite_console_race.py")
THREADS = 8
ROUNDS = 1


@pytest.mark.matrix  # copies the seeded SQLite metastore, which the quick tier does not create
def test_simultaneous_approvals_on_a_sqlite_console_database_are_all_recorded(django_db_setup, tmp_path) -> None:
    """Eight approvers approve eight requests at the same moment: eight 200s, eight approvals, eight audit records."""
    # given: a fresh console database and a copy of the seeded SQLite metastore
    metastore = tmp_path / "metastore.sqlite3"
    shutil.copyfile(settings.DATABASES["hive_sqlite"]["NAME"], metastore)
    unrelated = ("METASTORES", "DEFAULT_METASTORE", "DJANGO_SETTINGS_MODULE")
    env = {name: value for name, value in os.environ.items() if name not in unrelated}
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'console.sqlite3'}",
        METASTORE_URL=f"sqlite:///{metastore}",
        CATALOG_ADMIN_VAR=str(tmp_path),
        DJANGO_SECRET_KEY="tests-only",
        DJANGO_ALLOWED_HOSTS="testserver",
        PYTHONPATH=str(settings.BASE_DIR),
    )

    # when
    finished = subprocess.run(
        [sys.executable, str(RACE), str(ROUNDS), str(THREADS)],
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=600,
    )

    # then
    assert finished.returncode == 0, finished.stderr[-3000:]
    result = json.loads(finished.stdout.strip().splitlines()[-1])
    approvals = ROUNDS * THREADS
    assert result["database"] == "django.db.backends.sqlite3"
    assert result["answers"] == [[200, ""]] * approvals, finished.stderr[-3000:]
    assert (result["approvals"], result["audit_approvals"], result["audit_intact"]) == (approvals, approvals, True)
