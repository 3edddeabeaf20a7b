"""
The baseline in the same run: a statement previewed and executed by the code of an earlier commit, in a child
process on the same metastore (the commit extracted once by ``common.code_at``,
its own console database there, migrated by its own migrations). The environment (metastores, governed roots) is
the caller's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from common import code_at

EXECUTE = """
import json, os, sys, time
sys.path.insert(0, os.getcwd())
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from catalog_admin.selectors.metastores import get_metastore
from operations.services.alter import alter_execute, alter_preview_statement
started = time.perf_counter()
plan = alter_preview_statement(metastore=get_metastore(sys.argv[1]), statement=sys.argv[2])
previewed = time.perf_counter()
assert not plan.blockers, plan.blockers
execution = alter_execute(preview=plan, actor="benchmark", source="cli", reason="benchmark")
done = time.perf_counter()
assert execution.actual_counts == execution.expected_counts
print(json.dumps({"preview_s": previewed - started, "execute_s": done - previewed, "statements": len(plan.steps),
                  "partitions": plan.partitions_touched, "estimated_s": plan.estimated_seconds}))
"""


def execute_before(commit: str, alias: str, statement: str) -> dict[str, Any]:
    """Preview and execute ``statement`` on metastore ``alias`` with the code of ``commit``: its timings."""
    folder = code_at(commit)
    (folder / "var").mkdir(exist_ok=True)
    (folder / "var" / "console.sqlite3").unlink(missing_ok=True)  # a fresh console database, as the caller's
    env = {**os.environ, "CATALOG_ADMIN_VAR": str(folder / "var"), "DJANGO_SETTINGS_MODULE": "catalog_admin.settings"}
    command = [sys.executable, "-c", EXECUTE, alias, statement]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the code of {commit} failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"code of {commit}: {statement}: preview {result['preview_s']:.2f} s, execution {result['execute_s']:.2f} s")
    return result
