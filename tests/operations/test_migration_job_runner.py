"""The job runner's data migration (0010) names old jobs for what they do."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import User

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
