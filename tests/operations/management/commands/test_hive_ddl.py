"""
``manage.py hive_ddl``: the operators' and scripts' path to the same preview and execution as the console.

It prints the preview (or its JSON), executes only with ``--execute --reason``, and tells scripts by its exit
status whether the statement can run (0), is blocked by Hive's rules (2) or is an error (1); nothing is written
unless it executes.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalog_admin.models import Table
from catalog_admin.selectors.metastores import Metastore
from operations.models import AuditRecord, Execution
from tests.fixtures.operations import metastore_dump, warehouse_tree

pytestmark = pytest.mark.parametrize("metastore_alias", ["hive23_pg", "hive40_my"], indirect=True)

RENAME = "ALTER TABLE sales.orders RENAME TO sales.orders_v2"


def hive_ddl(metastore: Metastore, *args: str) -> str:
    out = io.StringIO()
    call_command("hive_ddl", *args, "--metastore", metastore.name, stdout=out)
    return out.getvalue()


def hive_ddl_refused(metastore: Metastore, *args: str) -> tuple[CommandError, str]:
    """The command's error and what it printed before it."""
    out = io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("hive_ddl", *args, "--metastore", metastore.name, stdout=out)
    return refused.value, out.getvalue()


def table_names(metastore: Metastore) -> set[str]:
    return set(Table.objects.using(metastore.alias).filter(database__name="sales").values_list("name", flat=True))


def test_a_preview_prints_the_plan_and_writes_nothing(metastore: Metastore, warehouse: Path) -> None:
    """Rows per table, the directory move with its checks, Hive's own cost; the metastore and disk are untouched."""
    # given
    rows, tree = metastore_dump(metastore.alias), warehouse_tree(warehouse)

    # when
    text = hive_ddl(metastore, RENAME)

    # then
    assert text.startswith("Statement : ALTER TABLE `sales`.`orders` RENAME TO `sales`.`orders_v2`\n")
    assert "  TBLS                     0         1         0" in text
    assert "10 partitions move with it, 2 stay; source exists: yes, destination free: yes, same filesystem: yes" in text
    round_trips = 10 if metastore.schema.version.major < 3 else 12  # 2.3 saves only the partitions it moves
    assert f"Hive {metastore.schema.version} itself: {round_trips} partition round trips" in text
    assert "BLOCKED" not in text
    assert (metastore_dump(metastore.alias), warehouse_tree(warehouse)) == (rows, tree)
    assert not Execution.objects.exists()


def test_json_carries_the_whole_preview(metastore: Metastore) -> None:
    """Machines get the preview as JSON: counts, moves, blockers, Hive's comparison and the fingerprint."""
    # when
    result = json.loads(hive_ddl(metastore, RENAME, "--json"))

    # then
    preview = result["preview"]
    assert (preview["executable"], preview["risk"]) == (True, "high")
    assert {"table": "TBLS", "inserted": 0, "updated": 1, "deleted": 0} in preview["row_changes"]
    assert [m["partitions_moving"] for m in preview["moves"]] == [10]
    assert preview["hive"]["partition_round_trips"] == (10 if metastore.schema.version.major < 3 else 12)
    assert len(preview["fingerprint"]) == 32
    assert "execution" not in result


def test_a_blocked_statement_exits_2_after_printing_why(metastore: Metastore, warehouse: Path) -> None:
    """Hive's rules refuse the rename onto an existing table: the blockers are printed, the status is 2."""
    # given
    rows, tree = metastore_dump(metastore.alias), warehouse_tree(warehouse)

    # when
    error, printed = hive_ddl_refused(
        metastore, "ALTER TABLE sales.orders RENAME TO sales.customers", "--execute", "--reason", "test"
    )

    # then
    assert error.returncode == 2
    # Hive's two, and containment's: the destination is sales.customers' own directory.
    assert str(error).startswith("[hive_rule_violation] 3 blocker(s): new table sales.customers already exists")
    assert "BLOCKED [2.7] new table sales.customers already exists" in printed
    assert "the directory of sales.customers" in printed
    assert (metastore_dump(metastore.alias), warehouse_tree(warehouse)) == (rows, tree)
    assert not Execution.objects.exists()


def test_a_blocked_statement_still_prints_its_json(metastore: Metastore) -> None:
    # when
    error, printed = hive_ddl_refused(metastore, "ALTER TABLE sales.orders ADD COLUMNS (status string)", "--json")

    # then
    assert error.returncode == 2
    blockers = json.loads(printed)["preview"]["blockers"]
    assert [(b["rule"], b["message"]) for b in blockers] == [("ddl", "Duplicate column name: status")]


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        (
            "ALTER TABLE sales.orders TOUCH",
            "[ddl_parse_error] Unsupported statement at line 1, column 26: ALTER TABLE … TOUCH is Hive",
        ),
        ("ALTER TABLE sales.nope RENAME TO sales.nope_v2", "[not_found] Table 'sales.nope' was not found."),
    ],
)
def test_errors_exit_1_and_say_what_is_wrong(metastore: Metastore, statement: str, message: str) -> None:
    """Unparseable DDL names the position and lists what is supported; an unknown table is named."""
    # when
    error, _printed = hive_ddl_refused(metastore, statement)

    # then
    assert error.returncode == 1
    assert str(error).startswith(message)
    assert ("Supported statements:\n  ALTER TABLE [db.]t RENAME TO [db.]t2" in str(error)) == ("parse" in message)


def test_drop_if_exists_of_a_missing_table_runs_and_says_nothing_changes(metastore: Metastore) -> None:
    """As Hive: no refusal, the plan says plainly that nothing will change, and executing it writes nothing."""
    # given
    before = metastore_dump(metastore.alias)

    # when
    printed = hive_ddl(metastore, "DROP TABLE IF EXISTS sales.nope", "--execute", "--reason", "cleanup script")

    # then
    assert "does not exist: IF EXISTS makes this a no-op" in printed and "nothing will change" in printed
    assert metastore_dump(metastore.alias) == before


def test_create_view_is_refused_naming_why(metastore: Metastore) -> None:
    # when
    error, _printed = hive_ddl_refused(metastore, "CREATE VIEW sales.v AS SELECT * FROM sales.orders")

    # then
    assert error.returncode == 1
    assert "CREATE VIEW is refused: Hive's Driver stores a view's VIEW_EXPANDED_TEXT" in str(error)


def test_execute_needs_a_reason(metastore: Metastore) -> None:
    # when
    with pytest.raises(CommandError, match="--execute needs --reason"):
        hive_ddl(metastore, RENAME, "--execute")

    # then
    assert "orders" in table_names(metastore)


def test_execute_runs_the_preview_and_audits_it_as_an_operator_action(metastore: Metastore, warehouse: Path) -> None:
    """The statement runs, and the audit record names the operator, the reason and the counts."""
    # when
    result = json.loads(
        hive_ddl(metastore, RENAME, "--json", "--execute", "--reason", "naming standard", "--actor", "operator:ana")
    )

    # then
    assert {"orders_v2"} <= table_names(metastore) and "orders" not in table_names(metastore)
    execution = Execution.objects.get(pk=result["execution"]["id"])
    assert (execution.state, execution.source, execution.actor) == (Execution.State.SUCCEEDED, "cli", "operator:ana")
    assert result["execution"]["counts"] == execution.expected_counts == execution.actual_counts
    audit = AuditRecord.objects.get(execution_id_ref=execution.pk)
    assert (audit.action, audit.actor, audit.details["reason"]) == ("execute", "operator:ana", "naming standard")
    assert audit.counts["TBLS"] == {"insert": 0, "update": 1, "delete": 0}


def test_the_help_lists_every_statement_the_console_runs(metastore: Metastore) -> None:
    """``hive_ddl --help`` names each supported statement, TRUNCATE TABLE and PURGE TRASH among them."""
    # given
    from operations.ddl.errors import SUPPORTED_STATEMENTS
    from operations.management.commands.hive_ddl import Command

    # when
    text = Command().create_parser("manage.py", "hive_ddl").format_help()

    # then
    flat = " ".join(text.split())
    assert all(" ".join(statement.split()) in flat for statement in SUPPORTED_STATEMENTS)
    assert "TRUNCATE TABLE t [PARTITION" in flat and "PURGE TRASH [OLDER THAN n DAYS]" in flat
    assert "not run: CREATE VIEW and ALTER VIEW … AS" in flat


@pytest.mark.django_db
def test_a_grant_previews_its_rows_and_executes_with_the_actor_as_grantor(metastore: Metastore) -> None:
    """GRANT through the command: the rows printed and nothing written; with --execute the actor is the grantor, and a
    duplicate then exits 2 naming Hive's refusal."""
    from catalog_admin.db import allow_metastore_writes

    statement = "GRANT SELECT ON TABLE sales.orders TO USER bob"
    rows = metastore_dump(metastore.alias)
    text = hive_ddl(metastore, statement, "--actor", "alice")
    assert "  insert TBL_PRIVS  SELECT to USER bob" in text
    assert metastore_dump(metastore.alias) == rows
    with allow_metastore_writes():
        executed = json.loads(
            hive_ddl(metastore, statement, "--actor", "alice", "--execute", "--reason", "r", "--json")
        )
        refused, _printed = hive_ddl_refused(metastore, statement, "--actor", "alice")
    assert executed["execution"]["counts"] == {"TBL_PRIVS": {"insert": 1, "update": 0, "delete": 0}}
    assert refused.returncode == 2 and "SELECT is already granted on table [sales,orders] by alice" in str(refused)


def test_a_sampled_directory_size_is_printed_as_about_with_its_sample(
    metastore: Metastore, warehouse: Path, settings
) -> None:
    # given
    settings.CATALOG_DROP_SAMPLE_PARTITIONS = 2

    # when
    printed = hive_ddl(metastore, "DROP TABLE sales.orders")

    # then
    assert re.search(
        r"\(about [\d,]+ files, [\d,]+ bytes, scaled from [12] of the \d+ partition directories inside;", printed
    )
