"""
Hive's rules for a new table's definition (``SemanticAnalyzer.validateCreateTable``, ``analyzeCreateTable``,
``TransactionalValidationListener.handleCreateTableTransactionalProp``), with Hive's own messages where it has one.
"""

from __future__ import annotations

from collections import Counter

from catalog_admin.selectors.metastores import Metastore
from operations.planners.create_table_acid import acid_value_blockers
from operations.planners.create_table_rows import TableDefinition
from operations.rules import Finding, check_column_types, check_table_name
from operations.specs import CreateTable

__all__ = ("definition_blockers",)

ORC_INPUT_FORMAT = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"
COMPLEX = ("array", "map", "struct", "uniontype")


def definition_blockers(metastore: Metastore, spec: CreateTable, table: TableDefinition) -> list[Finding]:
    """Every rule the definition breaks (names, types, keys, bucketing, delimiters, ACID)."""
    version = metastore.schema.version
    blockers = check_table_name(spec.target.table, version)
    columns = [(name, kind) for name, kind, _comment in table.columns]
    keys = [(name, kind) for name, kind, _comment in table.partition_keys]
    blockers += check_column_types([], columns + keys, version, is_view=False)
    blockers += _name_blockers(columns, keys)
    blockers += _bucket_blockers(table)
    if dict(spec.row_format).get("LINES", "\n") != "\n":
        blockers.append(Finding("lines_terminated", "ddl", "LINES TERMINATED BY only supports newline '\\n' right now"))
    return _unique(blockers + _transactional_blockers(metastore, spec, table))


def _name_blockers(columns: list[tuple[str, str]], keys: list[tuple[str, str]]) -> list[Finding]:
    blockers = []
    if not columns:
        message = "Either list of columns or a custom serializer should be specified"
        blockers.append(Finding("no_columns", "ddl", message))
    repeated = [name for name, count in Counter(n for n, _t in columns + keys).items() if count > 1]
    names = {n for n, _t in columns}
    in_both = [name for name, _t in keys if name in names]
    if in_both:
        blockers.append(Finding("partition_column_repeated", "ddl", f"Column repeated in partitioning columns: "
                                f"{', '.join(in_both)}"))  # fmt: skip
    blockers += [Finding("duplicate_column", "ddl", f"Duplicate column name: {name}") for name in repeated
                 if name not in in_both]  # fmt: skip
    blockers += [Finding("partition_column_type", "ddl", f"Partition column {name} must be of a primitive type, not "
                         f"{kind}") for name, kind in keys if kind.split("<")[0].lower() in COMPLEX]  # fmt: skip
    return blockers


def _bucket_blockers(table: TableDefinition) -> list[Finding]:
    names = {n for n, _t, _c in table.columns}
    missing = [c for c in table.bucket_columns if c not in names]
    missing += [c for c, _order in table.sort_columns if c not in names]
    if not missing:
        return []
    return [Finding("invalid_column", "ddl", f"Invalid column reference {', '.join(sorted(set(missing)))}: CLUSTERED "
                    "BY and SORTED BY name columns of the table (not partition keys)")]  # fmt: skip


def _transactional_blockers(metastore: Metastore, spec: CreateTable, table: TableDefinition) -> list[Finding]:
    """``TransactionalValidationListener``: an ACID table is managed, ORC (unless insert-only) and, on 2.3,
    bucketed."""
    params = dict(table.params)
    name = f"{spec.target.database}.{spec.target.table}"
    version = metastore.schema.version
    blockers = acid_value_blockers(dict(spec.properties), version, name, bool(table.sort_columns))
    if (params.get("transactional") or "").lower() != "true":
        return blockers
    if spec.external:
        blockers.append(Finding("acid_external", "acid", f"{name} cannot be declared transactional because it's an "
                                "external table"))  # fmt: skip
    if table.input_format != ORC_INPUT_FORMAT and params.get("transactional_properties") != "insert_only":
        blockers.append(Finding("acid_format", "acid", "The table must be stored using an ACID compliant format "
                                f"(such as ORC): {name}"))  # fmt: skip
    if metastore.schema.capabilities.acid_requires_bucketing and not table.bucket_columns:
        blockers.append(Finding("acid_bucketing", "acid", "The table must be bucketed and stored using an ACID "
                                f"compliant format (such as ORC): {name}"))  # fmt: skip
    return blockers


def _unique(findings: list[Finding]) -> list[Finding]:
    seen, unique = set(), []
    for finding in findings:
        if finding.message not in seen:
            seen.add(finding.message)
            unique.append(finding)
    return unique
