"""A table's ``SHOW CREATE TABLE``, read from the rows the table page already has."""

from __future__ import annotations

from catalog_admin.hive.show_create import CreateTableSource, show_create_table
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.tables import TableDetail

__all__ = ("show_create_statement",)


def show_create_statement(metastore: Metastore, detail: TableDetail) -> str:
    """What Hive of the metastore's version prints for ``SHOW CREATE TABLE db.table``."""
    table, sd = detail.table, detail.table.sd
    source = CreateTableSource(
        database=detail.database.name,
        name=table.name,
        table_type=table.type or "",
        columns=tuple((c.name, c.type, c.comment) for c in detail.columns),
        partition_keys=tuple((k.name, k.type, k.comment) for k in detail.partition_keys),
        params=detail.params,
        serde_lib=sd.serde.slib if sd and sd.serde else None,
        serde_params=detail.serde_params,
        input_format=sd.input_format if sd else None,
        output_format=sd.output_format if sd else None,
        location=sd.location if sd else None,
        bucket_columns=tuple(detail.bucket_columns),
        num_buckets=sd.num_buckets if sd else -1,
        sort_columns=tuple(detail.sort_columns),
        view_expanded_text=table.view_expanded_text,
    )
    return show_create_table(source, operation=metastore.schema.capabilities.show_create_table_operation)
