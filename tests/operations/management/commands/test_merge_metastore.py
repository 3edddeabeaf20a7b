"""``manage.py merge_metastore``: the merge preview printed as text or JSON, exit 0 / 2 / 1, ``--execute --reason``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connections

from catalog_admin.models import Database, Partition
from operations.merge.reads import MetastoreReader
from operations.models import AuditRecord, Execution
from tests.operations.merge.test_execute import _hive_clones, _table_ids


def _run(*args: str) -> tuple[str, CommandError | None]:
    out = StringIO()
    try:
        call_command("merge_metastore", *args, stdout=out)
    except CommandError as error:
        return out.getvalue(), error
    return out.getvalue(), None


def _warehouse(alias: str) -> str:
    return next(c.warehouse_location for c in settings.METASTORE_CONFIGS if c.name == alias)


UNBLOCKED = (
    "--databases",
    "sales,marketing",
    "--rename",
    "sales=sales_imported",
    "--rename",
    "marketing=marketing_imported",
)


@pytest.mark.django_db
@pytest.mark.matrix
def test_an_unblocked_merge_prints_json_and_exits_0() -> None:
    """MariaDB 2.3 into PostgreSQL 3.1 with renames and a location rule: JSON with the counts, executable, exit 0."""
    # given
    rule = f"{_warehouse('hive23_my')}={_warehouse('hive31_pg')}/from_hive23_my"
    # when
    out, error = _run("--source", "hive23_my", "--target", "hive31_pg", *UNBLOCKED, "--location-rule", rule, "--json")
    # then
    assert error is None
    preview = json.loads(out)
    assert preview["executable"] is True
    partitions = Partition.objects.using("hive23_my").filter(table__database__name__in=("sales", "marketing")).count()
    assert next(t["rows"] for t in preview["tables"] if t["table"] == "PARTITIONS") == partitions > 0
    assert preview["renames"] == {"sales": "sales_imported", "marketing": "marketing_imported"}
    assert all(d["new_location"].startswith(f"{_warehouse('hive31_pg')}/from_hive23_my/") for d in preview["databases"])
    assert len(preview["fingerprint"]) == 64


@pytest.mark.django_db
@pytest.mark.matrix
def test_a_plain_merge_is_blocked_with_exit_2_and_the_text_report() -> None:
    """The seeded metastores share database names: the report lists the blockers and the command exits 2."""
    # when
    out, error = _run("--source", "hive31_pg", "--target", "hive40_pg")
    # then
    assert error is not None and error.returncode == 2
    assert "[database_exists] Database 'sales' already exists in 'hive40_pg'" in out
    assert "PART_COL_STATS" in out and "Not carried:" in out and "MASTER_KEYS" in out
    assert "TAB_COL_STATS.ENGINE: filled" in out


@pytest.mark.django_db
def test_an_unknown_metastore_is_an_error_naming_it() -> None:
    """An unregistered source is [not_found], exit 1, naming it."""
    # when
    _, error = _run("--source", "nowhere", "--target", "hive31_pg")
    # then
    assert error is not None and error.returncode == 1
    assert str(error) == "[not_found] Metastore 'nowhere' was not found."


@pytest.mark.django_db
def test_a_malformed_rename_is_an_error_naming_it() -> None:
    """`--rename sales` (no new name) is [invalid_parameter], exit 1, quoting it."""
    # when
    _, error = _run("--source", "hive31_pg", "--target", "hive31_pg", "--rename", "sales")
    # then
    assert error is not None and error.returncode == 1
    assert str(error).startswith("[invalid_parameter] Rename 'sales' is not of the form src_db=new_name")


@pytest.mark.django_db
def test_execute_needs_a_reason() -> None:
    """--execute without --reason is refused (exit 1) before anything is read or written."""
    # when
    out, error = _run("--source", "hive31_pg", "--target", "hive31_pg", "--execute")
    # then
    assert error is not None and error.returncode == 1
    assert "--execute needs --reason" in str(error)
    assert out == "" and not Execution.objects.exists()


@pytest.mark.django_db
@pytest.mark.matrix
def test_execute_of_a_blocked_merge_exits_2_and_writes_nothing() -> None:
    """A blocked merge is printed and refused with exit 2 even with --execute: no execution, no audit record."""
    # when
    out, error = _run("--source", "hive23_pg", "--target", "hive31_pg", "--execute", "--reason", "consolidate")
    # then
    assert error is not None and error.returncode == 2
    assert "[database_exists]" in out
    assert not Execution.objects.exists() and not AuditRecord.objects.filter(action="execute").exists()


@pytest.mark.django_db
@pytest.mark.matrix
@pytest.mark.slow
def test_execute_merges_as_an_audited_cli_execution_that_revert_execution_undoes(merge_target) -> None:
    """--execute --reason runs the merge into a fresh 3.1 target as an Execution (source cli, the reason kept,
    audited), exit 0; then revert_execution ID --execute removes the imported databases."""
    # given
    target = merge_target("3.1.0")
    # when
    out, error = _run("--source", "hive23_pg", "--target", target, *UNBLOCKED, "--execute", "--reason", "r")
    # then
    assert error is None, error
    execution = Execution.objects.get()
    assert (execution.source, execution.reason, execution.state) == ("cli", "r", "succeeded")
    assert f"Merged as execution #{execution.pk}" in out
    assert Database.objects.using(target).filter(name__endswith="_imported").count() == 2
    # when
    call_command("revert_execution", str(execution.pk), "--execute", "--reason", "undo", stdout=StringIO())
    # then
    assert not Database.objects.using(target).filter(name__endswith="_imported").exists()


@pytest.mark.django_db
@pytest.mark.matrix
@pytest.mark.slow
def test_the_real_command_exits_0_2_and_1() -> None:
    """`manage.py merge_metastore` as a process: 0 when unblocked, 2 when blocked, 1 for an unknown metastore, with
    the error on stderr in the shared vocabulary."""
    # given
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "CATALOG_ADMIN_TEST_WORKER_DB": connections["default"].settings_dict["NAME"],
    }

    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "manage.py", "merge_metastore", *args]
        return subprocess.run(command, cwd=settings.BASE_DIR, env=environment, capture_output=True, text=True)

    # when
    unblocked = run("--source", "hive31_pg", "--target", "hive40_pg", *UNBLOCKED, "--json")
    blocked = run("--source", "hive31_pg", "--target", "hive40_pg")
    unknown = run("--source", "nowhere", "--target", "hive40_pg")
    # then
    assert unblocked.returncode == 0, unblocked.stderr
    assert json.loads(unblocked.stdout)["executable"] is True
    assert blocked.returncode == 2 and "[hive_rule_violation]" in blocked.stderr
    assert unknown.returncode == 1 and "[not_found] Metastore 'nowhere' was not found." in unknown.stderr


@pytest.mark.django_db
@pytest.mark.matrix
@pytest.mark.slow
def test_a_refused_merge_revert_can_be_run_again(merge_target) -> None:
    """revert_execution --execute refused (Hive added a partition to an imported table since) records a failed
    attempt that does not take the merge's revert: once the partition is included, the same command runs again,
    removes the imported databases, and a third run is refused as already reverted."""
    # given
    target = merge_target("3.1.0")
    _run("--source", "hive31_pg", "--target", target, *UNBLOCKED, "--execute", "--reason", "r")
    merged = Execution.objects.get()
    table_id, _ = _table_ids(target, "sales_imported", "orders")
    part_id, part_sd = MetastoreReader(target).rows(
        'SELECT "PART_ID", "SD_ID" FROM "PARTITIONS" WHERE "TBL_ID" = %s ORDER BY "PART_ID"', [table_id]
    )[0]
    sd_id = _hive_clones(target, "SDS", "SD_ID", part_sd, LOCATION="file:/tmp/hive-added")
    _hive_clones(target, "PARTITIONS", "PART_ID", part_id, PART_NAME="dt=2099-01-01", SD_ID=sd_id)
    with pytest.raises(CommandError) as refused:
        call_command("revert_execution", str(merged.pk), "--execute", "--reason", "undo", stdout=StringIO())

    # when
    call_command(
        "revert_execution", str(merged.pk), "--execute", "--reason", "undo", "--include-hive-rows", stdout=StringIO()
    )

    # then
    assert "1 PARTITIONS" in str(refused.value)
    assert not Database.objects.using(target).filter(name__endswith="_imported").exists()
    attempts = merged.revert_attempts.order_by("pk")
    assert [a.state for a in attempts] == [Execution.State.FAILED, Execution.State.SUCCEEDED]
    with pytest.raises(CommandError) as again:
        call_command("revert_execution", str(merged.pk), "--execute", "--reason", "undo", stdout=StringIO())
    assert f"already reverted by #{attempts[1].pk}" in str(again.value)
