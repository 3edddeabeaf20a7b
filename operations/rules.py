"""
Hive's ALTER TABLE rules (HiveAlterHandler and friends), version by version, as pure functions.

Each check returns :class:`Finding` values with the rule number from ``hive-alter-rules.md`` and a
Hive-like message. 2.3 follows the 3.1.1 reading unless noted: the handler did not change between them
for these rules.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from django.conf import settings

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.hive.names import directory_name_problems, is_valid_name
from catalog_admin.hive.versions import SchemaVersion
from operations.ddl.types import type_problem

__all__ = (
    "BoundedFindings",
    "Finding",
    "blocked_error",
    "bound_findings",
    "canonical_type",
    "check_alter_form",
    "check_bucket_columns",
    "check_column_types",
    "check_database_name",
    "check_partition_keys",
    "check_partition_name_whitelist",
    "check_reorder_serde",
    "check_replace_columns_serde",
    "check_table_name",
    "incompatible_columns",
    "is_known_type",
    "rule_owner",
    "types_compatible",
)

# ColumnType.AllTypes (3.x, 4.x; serdeConstants' primitive and complex names in 2.3): the names a type may start
# with. Hive's parser turns INTEGER into int and NUMERIC into decimal (operations.specs.hive_column_type); the
# metastore itself refuses them. The multi-word timestamp name never matches a first token, and the bookkeeping
# words of 3.x/4.x (columns, columns.types, column.name.delimiter) are left out: no Hive client sends them as a type.
KNOWN_TYPES = frozenset(
    {
        "void",
        "boolean",
        "tinyint",
        "smallint",
        "int",
        "bigint",
        "float",
        "double",
        "string",
        "varchar",
        "char",
        "date",
        "datetime",
        "timestamp",
        "decimal",
        "binary",
        "interval_year_month",
        "interval_day_time",
        "array",
        "map",
        "struct",
        "uniontype",
        "timestamp with local time zone",
    }
)
# Rule 5.5: metastore.allow.incompatible.col.type.changes.serdes, by default.
EXEMPT_SERDES = frozenset({"org.apache.hadoop.hive.kudu.KuduSerDe", "org.apache.iceberg.mr.hive.HiveIcebergSerDe"})
ORC_SERDE = "org.apache.hadoop.hive.ql.io.orc.OrcSerde"
ORC_INPUT_FORMAT = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
COLUMNSET_SERDE = "org.apache.hadoop.hive.serde.thrift.columnsetSerDe"  # REPLACE COLUMNS turns it into LazySimpleSerDe
# The serdes REPLACE COLUMNS accepts. Hive 2.3 and 3.1: DDLTask.alterTableOrSinglePartition (REPLACECOLS, read from
# hive-exec-2.3.10's bytecode and from the pre-split DDLTask); 4.0: AlterTableReplaceColumnsOperation's
# VALID_SERIALIZATION_LIBS, which drops DynamicSerDe and adds Iceberg's serde. Avro (AvroSerDe) is in none of them.
_REPLACEABLE = frozenset(
    {
        "org.apache.hadoop.hive.serde2.MetadataTypedColumnsetSerDe",
        "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
        "org.apache.hadoop.hive.serde2.columnar.ColumnarSerDe",
        PARQUET_SERDE,
        ORC_SERDE,
    }
)
REPLACEABLE_SERDES_BEFORE_4 = _REPLACEABLE | {"org.apache.hadoop.hive.serde2.dynamic_type.DynamicSerDe"}
REPLACEABLE_SERDES_4 = _REPLACEABLE | {"org.apache.iceberg.mr.hive.HiveIcebergSerDe"}
NUMERIC_ORDER = ("tinyint", "smallint", "int", "bigint", "decimal", "float", "double")
STRING_FAMILY = frozenset({"string", "varchar", "char"})
DATE_FAMILY = frozenset({"date", "datetime", "timestamp"})
COMPLEX = frozenset({"array", "map", "struct", "uniontype"})


# Who refuses a finding. Hive's rules carry their number in hive-alter-rules.md ("9.1"); a few of Hive's own checks
# carry a name instead: its DDL analysis ("ddl": unknown or duplicate columns …) and ALTER TABLE on a view. Every other
# named rule (containment, relocate, rewrite, names, acid, spark, merge:…) is the console's own safety rule: Hive
# itself would run the change.
HIVE = "hive"
CONSOLE = "console"
_HIVE_RULE = re.compile(r"^[0-9]+(\.[0-9]+)*$")
_HIVE_NAMED_RULES = frozenset({"ddl"})
_HIVE_CODES = frozenset({"alter_table_on_view", "alter_view_on_table"})


def rule_owner(rule: str, code: str = "") -> str:
    """``hive`` when Hive itself enforces the rule of a finding, ``console`` when it is the console's safety rule."""
    if _HIVE_RULE.match(rule or "") or rule in _HIVE_NAMED_RULES or code in _HIVE_CODES:
        return HIVE
    return CONSOLE


@dataclass(frozen=True)
class Finding:
    """A rule that blocks a change (``blocker``) or deserves attention (``warning``)."""

    code: str
    rule: str
    message: str
    severity: str = "blocker"


@dataclass(frozen=True)
class BoundedFindings:
    """Findings as a preview stores and shows them: at most a bounded number of each code (the first ones found),
    every code's total, and a digest of them all (so that a change among the ones left out is still seen)."""

    listed: tuple[Finding, ...]
    counts: tuple[tuple[str, int], ...]  # (code, how many), in the order the codes were first found
    digest: str

    @property
    def total(self) -> int:
        return sum(count for _code, count in self.counts)

    @property
    def more(self) -> dict[str, int]:
        """Per code, how many are not listed (only the codes with some left out)."""
        listed = Counter(finding.code for finding in self.listed)
        return {code: count - listed[code] for code, count in self.counts if count > listed[code]}

    def as_list(self) -> list[dict[str, Any]]:
        return [asdict(finding) for finding in self.listed]


def bound_findings(findings: Iterable[Finding], per_code: int | None = None) -> BoundedFindings:
    """The first ``per_code`` findings of each code (``CATALOG_PREVIEW_FINDINGS_PER_CODE``, 20 by default), with
    each code's total and a digest of every finding: a preview of 50,000 blockers stores 20 of them and their count."""
    limit = per_code if per_code is not None else getattr(settings, "CATALOG_PREVIEW_FINDINGS_PER_CODE", 20)
    every = tuple(findings)
    counts = Counter(finding.code for finding in every)
    kept: Counter[str] = Counter()
    listed = []
    for finding in every:
        if kept[finding.code] < limit:
            kept[finding.code] += 1
            listed.append(finding)
    payload = json.dumps([[f.code, f.rule, f.message, f.severity] for f in every]).encode()
    return BoundedFindings(tuple(listed), tuple(counts.items()), hashlib.sha256(payload).hexdigest()[:32])


def blocked_error(
    blockers: Iterable[Finding | Mapping[str, Any]], counts: Mapping[str, int] | None = None
) -> ApplicationError:
    """The one refusal of a blocked plan (every kind, every service, the lifecycle): its first blocker's words;
    details name the rule, the bounded blockers and every code's count. ``blockers``: findings, or a stored
    summary's (then ``counts``: the summary's ``blocker_counts``, its totals beyond the ones listed)."""
    bounded = bound_findings(b if isinstance(b, Finding) else _finding(b) for b in blockers)
    first = bounded.listed[0]
    totals = dict(counts) if counts else dict(bounded.counts)
    details = {"rule": first.rule, "blockers": bounded.as_list(), "blocker_counts": totals}
    return ApplicationError(ErrorCode.HIVE_RULE_VIOLATION, first.message, details)


def _finding(stored: Mapping[str, Any]) -> Finding:
    return Finding(**{name: stored[name] for name in ("code", "rule", "message", "severity") if name in stored})


def check_alter_form(*, written_on_view: bool, is_view: bool) -> list[Finding]:
    """ALTER TABLE alters tables and ALTER VIEW views, with Hive's messages (ErrorMsg 10131 and 10132).

    Hive: ``DDLSemanticAnalyzer.validateAlterTableType(Table, AlterTableType, boolean expectView)`` (2.3 to 4.0,
    ``ql/src/java/org/apache/hadoop/hive/ql/parse/DDLSemanticAnalyzer.java``): on a view, ALTER TABLE is refused with
    ``ALTER_COMMAND_FOR_VIEWS``; on a table, ALTER VIEW with ``ALTER_COMMAND_FOR_TABLES``. The view forms Hive allows
    (RENAME, ADD/DROP PROPS, partitions) are the only ones the parser accepts after ALTER VIEW.
    """
    if is_view and not written_on_view:
        return [Finding("alter_table_on_view", "views", "To alter a view you need to use the ALTER VIEW command.")]
    if written_on_view and not is_view:
        message = "To alter a base table you need to use the ALTER TABLE command."
        return [Finding("alter_view_on_table", "views", message)]
    return []


def check_table_name(name: str, version: SchemaVersion) -> list[Finding]:
    """Rule 2.3: the new table name must be a valid object name for this Hive version; and, the console's own rule,
    it must make one safe directory under its database's directory."""
    findings = (
        [] if is_valid_name(name, version) else [Finding("invalid_name", "2.3", f"{name} is not a valid object name")]
    )
    return findings + _unsafe_name("table", name)


def check_database_name(name: str) -> list[Finding]:
    """The console's rule for a database whose name becomes a directory (``<warehouse>/<name>.db``): a safe name.
    Hive itself does not check the database name of an ALTER TABLE (rule 2.3)."""
    return _unsafe_name("database", name)


def _unsafe_name(kind: str, name: str) -> list[Finding]:
    problems = directory_name_problems(name)
    if not problems:
        return []
    return [
        Finding(
            "unsafe_name",
            "names",
            f"The {kind} name {name!r} cannot be used as a directory name: {'; '.join(problems)}. The console does not "
            "build locations that could leave their parent directory.",
        )
    ]


def canonical_type(type_name: str) -> str:
    """Rule 5.3: lower-case, cut at the first non-word character; integer→int, numeric→decimal."""
    lowered = type_name.strip().lower()
    match = re.match(r"\w+", lowered)
    head = match.group() if match else lowered
    return {"integer": "int", "numeric": "decimal"}.get(head, head)


def is_known_type(type_name: str) -> bool:
    """Rule 2.4: the first token of the type must be a known Hive type name."""
    lowered = type_name.strip().lower()
    if lowered == "<derived from deserializer>":
        return True
    match = re.match(r"\w+|[^\w]+", lowered)
    return bool(match) and match.group() in KNOWN_TYPES


def types_compatible(old: str, new: str, version: SchemaVersion) -> bool:
    """Rule 5.4: whether a column may change from ``old`` to ``new`` (by canonical names)."""
    a, b = canonical_type(old), canonical_type(new)
    if a == b or a == "void":
        return b not in COMPLEX or a == b
    if a in COMPLEX or b in COMPLEX:
        return False
    if a in NUMERIC_ORDER:
        if b in STRING_FAMILY:
            return True
        return b in NUMERIC_ORDER and NUMERIC_ORDER.index(b) > NUMERIC_ORDER.index(a)
    if a in STRING_FAMILY:
        return b in STRING_FAMILY or (b == "double" and version.capabilities.string_to_double_type_change)
    if a in DATE_FAMILY:
        return b in STRING_FAMILY
    return False


def incompatible_columns(old: list[tuple[str, str]], new: list[tuple[str, str]], version: SchemaVersion) -> list[str]:
    """Rule 5.2: names of new columns whose type is incompatible with the old column at the same position."""
    return [new[i][0] for i in range(min(len(old), len(new))) if not types_compatible(old[i][1], new[i][1], version)]


def check_column_types(
    old: list[tuple[str, str]],
    new: list[tuple[str, str]],
    version: SchemaVersion,
    *,
    is_view: bool,
    serde: str | None = None,
) -> list[Finding]:
    """Rules 2.4 and 5: every new type is known, and no position changes to an incompatible type unless the table's
    serde is exempt (4.x, rule 5.5: then a warning)."""
    findings = [Finding("invalid_type", "2.4", f"Invalid column type: {t}") for _n, t in new if not is_known_type(t)]
    findings += _grammar_findings(old, new, version) if not findings else []
    if findings or is_view:
        return findings
    bad = incompatible_columns(old, new, version)
    if bad and version.capabilities.incompatible_type_exempt_serdes and serde in EXEMPT_SERDES:
        return [
            Finding(
                "incompatible_column_type_exempt",
                "5.5",
                f"Columns {', '.join(bad)} change to types incompatible with their old ones: Hive allows it for "
                f"{serde} tables, and the data is not rewritten.",
                "warning",
            )
        ]
    if bad:
        findings.append(
            Finding(
                "incompatible_column_type",
                "5.6",
                "The following columns have types incompatible with the existing columns in their respective "
                "positions :\n" + ",".join(bad),
            )
        )
    return findings


def _grammar_findings(old: list[tuple[str, str]], new: list[tuple[str, str]], version: SchemaVersion) -> list[Finding]:
    """Types the change brings in that ``version``'s own parser would refuse (a request written before its metastore
    was known is parsed in every line's grammar: ``operations.ddl.types``); types the table already has are left."""
    existing = {t for _n, t in old} | {"<derived from deserializer>"}
    problems = {t: type_problem(t, version) for _n, t in new if t not in existing}
    return [Finding("invalid_type", "2.4", f"Invalid column type: {t} ({p})") for t, p in problems.items() if p]


def check_bucket_columns(bucket_columns: list[str], new_columns: list[str], version: SchemaVersion) -> list[Finding]:
    """Rule 2.5: every bucketing column (lower-cased) is a new column; a blocker on 4.x, a warning before (not checked
    there, so the table would stay bucketed by a column it no longer has)."""
    names = {name.lower() for name in new_columns}
    dangling = [column.lower() for column in bucket_columns if column.lower() not in names]
    if not dangling:
        return []
    message = f"Bucket columns - [{', '.join(dangling)}] doesn't match with any table columns"  # Java's List.toString
    if version.capabilities.validates_bucket_columns:
        return [Finding("bucket_columns", "2.5", message)]
    return [
        Finding(
            "bucket_columns_dangling",
            "2.5",
            f"{message}: Hive {version.line_name} does not check this (4.0 does), so the table stays "
            "bucketed by a column it no longer has.",
            "warning",
        )
    ]


def check_partition_keys(old: list[str], new: list[str], *, is_view: bool) -> list[Finding]:
    """Rule 6.2: partition keys keep their number, names and order."""
    if is_view or old == new:
        return []
    return [Finding("partition_keys_changed", "6.3", "partition keys can not be changed.")]


def _hive_table_name(database: str, table: str) -> str:
    """The ``db.table`` DDLTask puts in its messages (``AlterTableDesc.getOldName`` / ``getDbTableName``)."""
    return f"{database}.{table}"


def check_replace_columns_serde(
    *,
    database: str,
    table: str,
    serde: str | None,
    old_count: int,
    new_count: int,
    cascade: bool,
    partitioned: bool,
    version: SchemaVersion,
    schema_evolution: bool = True,
) -> list[Finding]:
    """What Hive's client refuses in REPLACE COLUMNS before the metastore sees it, by serde.

    Hive 2.3 and 3.1: ``DDLTask.alterTableOrSinglePartition`` (``REPLACECOLS``); 4.0:
    ``AlterTableReplaceColumnsOperation.doAlteration``:

    * a serde outside the list (Avro's among them) gives CANNOT_REPLACE_COLUMNS;
    * ORC (``OrcSerde``) with schema evolution (the table is transactional, or ``hive.exec.schema.evolution``, true by
      default) may not end with fewer columns: REPLACE_CANNOT_DROP_COLUMNS;
    * Parquet (``ParquetHiveSerDe.isParquetTable``) with schema evolution may not drop columns of a partitioned table
      without CASCADE (3.1 and 4.0; not in 2.3.10's DDLTask): REPLACE_CANNOT_DROP_COLUMNS.

    ``schema_evolution`` is ``isSchemaEvolutionEnabled``: the caller passes True for a transactional table."""
    name = _hive_table_name(database, table)
    allowed = REPLACEABLE_SERDES_4 if version.capabilities.replace_columns_serdes_of_4 else REPLACEABLE_SERDES_BEFORE_4
    if serde != COLUMNSET_SERDE and serde not in allowed:
        message = f"Replace columns is not supported for table {name}. SerDe may be incompatible."
        return [Finding("replace_columns_serde", "ddl", message)]
    dropping = new_count < old_count
    cannot_drop = f"Replacing columns cannot drop columns for table {name}. SerDe may be incompatible"
    if serde == ORC_SERDE and schema_evolution and dropping:
        return [Finding("replace_cannot_drop_columns", "ddl", cannot_drop)]
    parquet_rule = version.capabilities.parquet_replace_needs_cascade_to_drop
    if parquet_rule and serde == PARQUET_SERDE and schema_evolution and dropping and partitioned and not cascade:
        return [Finding("replace_cannot_drop_columns", "ddl", cannot_drop)]
    return []


def check_reorder_serde(
    *, database: str, table: str, input_format: str | None, reorders: bool, schema_evolution: bool = True
) -> list[Finding]:
    """CHANGE COLUMN … FIRST|AFTER on an ORC table (``OrcInputFormat``) with schema evolution: CANNOT_REORDER_COLUMNS,
    in every version (2.3/3.1 ``DDLTask.alterTableOrSinglePartition``, RENAMECOLUMN; 4.0
    ``AlterTableChangeColumnOperation.doAlteration``). Hive refuses the clause itself, even when the position would
    not change; other formats may reorder."""
    if not (reorders and schema_evolution and input_format == ORC_INPUT_FORMAT):
        return []
    name = _hive_table_name(database, table)
    message = f"Reordering columns is not supported for table {name}. SerDe may be incompatible"
    return [Finding("cannot_reorder_columns", "ddl", message)]


def check_partition_name_whitelist(values: list[str], pattern: str, version: SchemaVersion) -> list[Finding]:
    """Rule 17.1: with ``metastore.partition.name.whitelist.pattern`` set (none by default), every new partition value
    must match it in full (``MetaStoreUtils.validatePartitionNameCharacters``: ``Pattern.matcher(value).matches()``);
    the first that does not is named with Hive's message (2.3 names the setting ``hive.metastore.…``)."""
    if not pattern:
        return []
    invalid = next((value for value in values if not re.fullmatch(pattern, value)), None)
    if invalid is None:
        return []
    setting = "metastore.partition.name.whitelist.pattern"
    setting = setting if version.capabilities.catalogs else f"hive.{setting}"
    return [
        Finding(
            "partition_name_whitelist",
            "17.1",
            f"Partition value '{invalid}' contains a character not matched by whitelist pattern '{pattern}'.  "
            f"(configure with {setting})",
        )
    ]
