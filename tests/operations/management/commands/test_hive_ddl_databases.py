"""``manage.py hive_ddl`` with the database statements (issue 27): previewed, refused with status 2, executed."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalog_admin.models import Database
from catalog_admin.selectors.metastores import Metastore
from tests.fixtures.operations import metastore_dump

pytestmark = [pytest.mark.django_db, pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)]


def hive_ddl(metastore: Metastore, *args: str) -> str:
    out = io.StringIO()
    call_command("hive_ddl", *args, "--metastore", metastore.name, stdout=out)
    return out.getvalue()


def test_a_create_database_preview_prints_its_plan_and_writes_nothing(metastore: Metastore) -> None:
    """The plan's rows, directory and event are printed; nothing is written without --execute."""
    # given
    before = metastore_dump(metastore.alias)

    # when
    printed = hive_ddl(metastore, "CREATE DATABASE cli_made")

    # then
    assert "Statement : CREATE DATABASE `cli_made`" in printed and "Event: CREATE_DATABASE" in printed
    assert "Directory create: file:" in printed and "Rows DBS" in printed
    assert metastore_dump(metastore.alias) == before


def test_a_blocked_drop_exits_2_and_execute_runs_as_the_os_user(metastore: Metastore, warehouse: Path) -> None:
    """DROP DATABASE of a database with tables is refused with status 2; an executed CREATE is owned by the operator."""
    # when
    with pytest.raises(CommandError) as refused:
        hive_ddl(metastore, "DROP DATABASE sales")
    printed = hive_ddl(metastore, "CREATE DATABASE cli_run", "--execute", "--reason", "lab", "--json",
                       "--actor", "operator:maria")  # fmt: skip

    # then
    assert refused.value.returncode == 2 and "is not empty" in str(refused.value)
    assert json.loads(printed)["execution"]["state"] == "succeeded"
    assert Database.objects.using(metastore.alias).get(name="cli_run").owner_name == "maria"
    assert (warehouse / "cli_run.db").is_dir()
