"""The job runner's data migration (0010) names old jobs for what they do."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from operations.models import ChangeRequest, Job

pytestmark = pytest.mark.django_db
migration = importlib.import_module("operations.migrations.0010_job_runner")


def test_old_job_kinds_are_renamed_for_what_they_do(people: dict[str, User]) -> None:
    # given
    revert = ChangeRequest.objects.create(
        requester=people["steward"],
        metastore="hive31_pg",
        statement="REVERT MERGE",
        operation={"kind": "merge_revert"},
        preview={},
        fingerprint="",
        risk="high",
    )
    old = {
        "alter": Job.objects.create(kind="execute_change_request"),
        "compact": Job.objects.create(
            kind="relocate", program="rewrite", plan={"operation": {"kind": "compact_files"}}
        ),
        "convert": Job.objects.create(
            kind="relocate", program="rewrite", plan={"operation": {"kind": "convert_format"}}
        ),
        "relocate": Job.objects.create(kind="relocate", program="relocate", plan={"operation": {"kind": "relocate"}}),
        "merge_revert": Job.objects.create(kind="merge", change_request=revert),
        "merge": Job.objects.create(kind="merge"),
        "spark_program": Job.objects.create(kind="spark_program", program="checksum"),
    }
    # when
    migration.name_kinds(apps, None)
    # then
    assert {expected: Job.objects.get(pk=job.pk).kind for expected, job in old.items()} == {kind: kind for kind in old}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True, databases=["default"])
@pytest.mark.usefixtures("restore_roles")
def test_each_line_of_an_old_json_log_becomes_a_log_entry_in_order() -> None:
    """Migrated back to 0009 (the log a JSON list on the job) and forward again: every line is a ``JobLogEntry`` with
    its time, in order, and the old ``execute_change_request`` job is an ``alter`` job."""
    before, after = [("operations", "0009_revert_attempts_and_relocation_files")], [("operations", "0010_job_runner")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old_job = executor.loader.project_state(before).apps.get_model("operations", "Job")
    lines = [{"at": f"2026-11-27T10:00:0{n}+00:00", "message": f"step {n}"} for n in range(3)]
    job = old_job.objects.create(kind="execute_change_request", log=lines)
    try:
        # when
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(after)
        # then: read through 0010's own model (later migrations add columns the database does not have yet)
        migrated = executor.loader.project_state(after).apps.get_model("operations", "Job").objects.get(pk=job.pk)
        entries = list(migrated.log_entries.order_by("pk"))
        assert [e.message for e in entries] == ["step 0", "step 1", "step 2"]
        assert [e.at.second for e in entries] == [0, 1, 2]
        assert migrated.kind == "alter"
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
