"""
Table-level metadata on every metastore: ``SET``/``UNSET TBLPROPERTIES``, ``SET SERDEPROPERTIES`` and
``SET OWNER``. One row per key changes; partitions and directories are never touched (rule 10.5).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Database, DatabaseParam, SerDeParam, Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.services.alter import alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.factories import table_row
from tests.fixtures.operations import execute, metastore_dump, row_changes, warehouse_tree


def params(metastore: Metastore, table_id: int) -> dict[str, str | None]:
    return dict(TableParam.objects.using(metastore.alias).filter(table_id=table_id).values_list("key", "value"))


def test_set_tblproperties_inserts_new_keys_and_updates_changed_ones(metastore: Metastore) -> None:
    """Two new keys are inserted, one changed key updated, an unchanged key left alone."""
    # given
    customers = table_row(metastore, "sales", "customers")
    before = params(metastore, customers.id)

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.customers SET TBLPROPERTIES "
        f"('comment'='Buyers', 'owner.team'='sales', 'numRows'='99', 'numFiles'='{before['numFiles']}')",
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"TABLE_PARAMS": (2, 1, 0)}
    assert (preview.risk, preview.moves, preview.partitions_touched, preview.blockers) == ("low", (), 0, ())
    assert dict(preview.after.params) == {**before, "comment": "Buyers", "owner.team": "sales", "numRows": "99"}
    assert execution.actual_counts == execution.expected_counts
    assert params(metastore, customers.id) == {**before, "comment": "Buyers", "owner.team": "sales", "numRows": "99"}
    assert table_row(metastore, "sales", "customers").type == "MANAGED_TABLE"


def test_setting_external_changes_the_table_type(metastore: Metastore) -> None:
    """EXTERNAL=TRUE makes a managed table external (and FALSE the other way round), in TBLS too."""
    # given / when
    to_external = execute(
        alter_preview_statement(
            metastore=metastore, statement="ALTER TABLE sales.customers SET TBLPROPERTIES ('EXTERNAL'='TRUE')"
        )
    )
    to_managed = execute(
        alter_preview_statement(
            metastore=metastore, statement="ALTER TABLE marketing.campaigns SET TBLPROPERTIES ('EXTERNAL'='FALSE')"
        )
    )

    # then
    assert to_external.expected_counts == {
        "NOTIFICATION_LOG": {"insert": 1, "update": 0, "delete": 0},
        "TABLE_PARAMS": {"insert": 1, "update": 0, "delete": 0},
        "TBLS": {"insert": 0, "update": 1, "delete": 0},
    }
    assert to_managed.actual_counts == to_managed.expected_counts
    assert table_row(metastore, "sales", "customers").type == "EXTERNAL_TABLE"
    assert table_row(metastore, "marketing", "campaigns").type == "MANAGED_TABLE"


def test_spark_properties_come_with_a_warning(metastore: Metastore) -> None:
    """Keys under spark.sql. are Spark's own copy of the table: the preview says so."""
    # given / when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.customers SET TBLPROPERTIES ('spark.sql.sources.provider'='parquet')",
    )

    # then
    assert [w.code for w in preview.warnings] == ["spark_properties"]
    assert preview.blockers == ()


def test_unset_tblproperties_deletes_the_keys(metastore: Metastore, warehouse: Path) -> None:
    """UNSET removes existing keys; IF EXISTS tolerates a missing one; partitions and files are untouched."""
    # given
    orders = table_row(metastore, "sales", "orders")
    before = params(metastore, orders.id)
    tree = warehouse_tree(warehouse)

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.orders UNSET TBLPROPERTIES IF EXISTS ('comment', 'numRows', 'nope')",
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"TABLE_PARAMS": (0, 0, 2)}
    assert execution.actual_counts == execution.expected_counts
    assert params(metastore, orders.id) == {k: v for k, v in before.items() if k not in ("comment", "numRows")}
    assert warehouse_tree(warehouse) == tree


def test_set_serdeproperties_writes_the_tables_serde(metastore: Metastore) -> None:
    """SERDE_PARAMS of the table's SerDe: one insert, one update; the partitions' SerDes are not touched."""
    # given
    clicks = table_row(metastore, "marketing", "clicks")
    serde_id = clicks.sd.serde_id
    others = list(
        SerDeParam.objects.using(metastore.alias)
        .exclude(serde_id=serde_id)
        .order_by("serde_id", "key")
        .values_list("serde_id", "key", "value")
    )

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE marketing.clicks SET SERDEPROPERTIES ('field.delim'='\\t', 'escape.delim'='\\\\')",
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"SERDE_PARAMS": (1, 1, 0)}
    assert preview.statement.endswith("SET SERDEPROPERTIES ('field.delim'='\\t', 'escape.delim'='\\\\')")
    assert execution.actual_counts == execution.expected_counts
    assert dict(SerDeParam.objects.using(metastore.alias).filter(serde_id=serde_id).values_list("key", "value")) == {
        "field.delim": "\t",
        "serialization.format": ",",
        "escape.delim": "\\",
    }
    assert (
        list(
            SerDeParam.objects.using(metastore.alias)
            .exclude(serde_id=serde_id)
            .order_by("serde_id", "key")
            .values_list("serde_id", "key", "value")
        )
        == others
    )


def test_set_owner_writes_the_owner_and_its_type_where_the_schema_has_one(metastore: Metastore) -> None:
    """TBLS.OWNER (and OWNER_TYPE from 3.0 on); Hive 2.3 stores a role's name only, with a warning."""
    # given
    has_type = metastore.schema.has(Table, "owner_type")
    before = metastore_dump(metastore.alias, events=False)

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers SET OWNER ROLE admins"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"TBLS": (0, 1, 0)}
    assert [w.code for w in preview.warnings] == ([] if has_type else ["owner_type_unsupported"])
    assert preview.diff == [("owner", "alice", "admins")]
    assert execution.actual_counts == execution.expected_counts
    customers = table_row(metastore, "sales", "customers")
    assert customers.owner == "admins"
    if has_type:
        assert customers.owner_type == "ROLE"
    after = metastore_dump(metastore.alias, events=False)
    assert [table for table in before if before[table] != after[table]] == ["TBLS"]


@pytest.mark.parametrize(
    ("table", "external"), [("sales.customers", "TRUE"), ("marketing.campaigns", "FALSE")], ids=["to-external", "back"]
)
def test_a_revert_of_an_external_change_restores_the_table_type(
    metastore: Metastore, table: str, external: str
) -> None:
    """Setting EXTERNAL changes TBLS.TBL_TYPE too: the revert puts both back."""
    # given
    rows = metastore_dump(metastore.alias, events=False)
    forward = execute(
        alter_preview_statement(
            metastore=metastore, statement=f"ALTER TABLE {table} SET TBLPROPERTIES ('EXTERNAL'='{external}')"
        )
    )

    # when
    execute(revert_preview(execution=forward))

    # then
    assert forward.before_image["table_type"] in ("MANAGED_TABLE", "EXTERNAL_TABLE")
    assert metastore_dump(metastore.alias, events=False) == rows


def test_a_revert_of_set_owner_restores_a_missing_owner_type(metastore: Metastore) -> None:
    """Tables upgraded from Hive 2.x carry no OWNER_TYPE (NULL): the revert puts NULL back, not the new type."""
    # given
    customers = table_row(metastore, "sales", "customers")
    if metastore.schema.has(Table, "owner_type"):
        with allow_metastore_writes():
            Table.objects.using(metastore.alias).filter(id=customers.id).update(owner_type=None)
    rows = metastore_dump(metastore.alias, events=False)
    forward = execute(
        alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.customers SET OWNER ROLE analysts")
    )

    # when
    execute(revert_preview(execution=forward))

    # then
    assert metastore_dump(metastore.alias, events=False) == rows


def test_hive_4_refuses_type_changes_and_acid_conversion_in_a_replication_source(metastore: Metastore) -> None:
    """Rule 4.2 (4.x): in a replication source a table keeps its type and does not become transactional."""
    # given
    with allow_metastore_writes():
        DatabaseParam.objects.using(metastore.alias).create(
            database_id=Database.objects.on(metastore).get(name="sales").id, key="repl.source.for", value="1"
        )

    # when
    external = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers SET TBLPROPERTIES ('EXTERNAL'='TRUE')"
    )
    comment = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers SET TBLPROPERTIES ('comment'='x')"
    )
    acid = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers SET TBLPROPERTIES ('transactional'='true')"
    )

    # then
    if metastore.schema.version.major >= 4:
        assert [(b.code, b.message) for b in external.blockers] == [
            (
                "replication_type_change",
                "Table type cannot be changed from MANAGED_TABLE to EXTERNAL_TABLE for the table sales.customers as "
                "it is enabled for replication.",
            )
        ]
    else:
        assert external.blockers == ()
    assert comment.blockers == ()
    refused = "replication_acid_conversion" in [b.code for b in acid.blockers]  # besides its format (parquet)
    assert refused == (metastore.schema.version.major >= 4)
