"""The parse error of Hive DDL text (statements and column types), with the statements the console supports."""

from __future__ import annotations

from catalog_admin.errors import ApplicationError, ErrorCode

__all__ = ("SUPPORTED_STATEMENTS", "VIEW_TEXT_REFUSAL", "DdlParseError")

# Why CREATE VIEW and ALTER VIEW … AS are refused (README, "Views"; tests/witness/test_spark_view_text.py shows what
# Hive's Driver writes).
VIEW_TEXT_REFUSAL = (
    "is refused: Hive's Driver stores a view's VIEW_EXPANDED_TEXT from its own semantic analysis (columns resolved "
    "against the metastore, * expanded into the columns, every table and column qualified and back-quoted), which "
    "the console cannot write exactly as Hive does; create or replace views with Hive (Beeline), then govern them "
    "here (ALTER VIEW … RENAME TO, SET/UNSET TBLPROPERTIES, DROP VIEW)"
)

SUPPORTED_STATEMENTS = (
    "ALTER TABLE [db.]t RENAME TO [db.]t2",
    "ALTER TABLE t ADD COLUMNS (c type [COMMENT '…'], …) [CASCADE|RESTRICT]",
    "ALTER TABLE t REPLACE COLUMNS (c type [COMMENT '…'], …) [CASCADE|RESTRICT]",
    "ALTER TABLE t CHANGE [COLUMN] old new type [COMMENT '…'] [FIRST|AFTER c] [CASCADE|RESTRICT]",
    "ALTER TABLE t SET TBLPROPERTIES ('k'='v', …)",
    "ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('k', …)",
    "ALTER TABLE t SET SERDEPROPERTIES ('k'='v', …)",
    "ALTER TABLE t SET OWNER USER|ROLE|GROUP name",
    "ALTER TABLE t [PARTITION (k='v', …)] SET LOCATION 'uri'",
    "ALTER TABLE t [PARTITION (k op 'v', …)] SET LOCATION 'uri' WITH DATA",
    "ALTER TABLE t PARTITION LOCATIONS REPLACE PREFIX 'old' WITH 'new'",
    "ALTER TABLE t PARTITION (k='v', …) RENAME TO PARTITION (k='v2', …)",
    "ALTER TABLE t ADD [IF NOT EXISTS] PARTITION (k='v', …) [LOCATION 'uri'] [PARTITION (…) [LOCATION 'uri'] …]",
    "MSCK [REPAIR] TABLE t [ADD|DROP|SYNC PARTITIONS]",
    "ALTER TABLE t DROP [IF EXISTS] PARTITION (k op 'v', …)[, PARTITION (…)] [PURGE]",
    "ALTER TABLE t [PARTITION (k='v', …)] COMPACT 'major'|'minor'",
    "ALTER TABLE t [PARTITION (k op 'v', …)] CONCATENATE [WITH ('min_files'='n', 'max_average_bytes'='n', "
    "'target_file_bytes'='n')]",
    "ALTER TABLE t [PARTITION (k='v', …)] SET FILEFORMAT PARQUET|ORC|AVRO",
    "ALTER TABLE t [PARTITION (k op 'v', …)] SET FILEFORMAT PARQUET|ORC|AVRO WITH DATA",
    "ALTER TABLE t ABORT TRANSACTIONS id [id …]",
    "ALTER TABLE t EXCHANGE PARTITION (k='v', …) WITH TABLE t2",
    "CREATE [EXTERNAL] TABLE [IF NOT EXISTS] [db.]t (c type [COMMENT '…'], …) [COMMENT '…'] "
    "[PARTITIONED BY (k type, …)] [CLUSTERED BY (c, …) [SORTED BY (c [ASC|DESC], …)] INTO n BUCKETS] "
    "[ROW FORMAT DELIMITED …|SERDE '…' [WITH SERDEPROPERTIES (…)]] "
    "[STORED AS TEXTFILE|SEQUENCEFILE|RCFILE|ORC|PARQUET|AVRO|INPUTFORMAT '…' OUTPUTFORMAT '…'] [LOCATION '…'] "
    "[TBLPROPERTIES (…)]",
    "CREATE [EXTERNAL] TABLE [IF NOT EXISTS] [db.]t LIKE [db.]s [LOCATION '…']",
    "TRUNCATE TABLE t [PARTITION (k='v', …)]",
    "ALTER TABLE t PURGE TRASH [OLDER THAN n DAYS]",
    "ANALYZE TABLE t [PARTITION (k op 'v', …)] COMPUTE STATISTICS [NOSCAN | FOR COLUMNS [c, …]]",
    "ALTER VIEW [db.]v RENAME TO [db.]v2",
    "ALTER VIEW v SET TBLPROPERTIES ('k'='v', …) | UNSET TBLPROPERTIES [IF EXISTS] ('k', …)",
    "CREATE DATABASE|SCHEMA [IF NOT EXISTS] d [COMMENT '…'] [LOCATION '…'] [MANAGEDLOCATION '…'] "
    "[WITH DBPROPERTIES ('k'='v', …)]",
    "ALTER DATABASE|SCHEMA d SET DBPROPERTIES ('k'='v', …) | SET OWNER USER|ROLE|GROUP name | SET LOCATION '…' "
    "| SET MANAGEDLOCATION '…'",
    "DROP DATABASE|SCHEMA [IF EXISTS] d [RESTRICT|CASCADE]",
    "DROP TABLE [IF EXISTS] [db.]t [PURGE]",
    "DROP VIEW [IF EXISTS] [db.]v",
    "GRANT SELECT|INSERT|UPDATE|DELETE|ALL[, …] ON DATABASE d | [TABLE] t TO USER|GROUP|ROLE p[, …] "
    "[WITH GRANT OPTION]",
    "REVOKE [GRANT OPTION FOR] priv[, …] ON DATABASE d | [TABLE] t FROM USER|GROUP|ROLE p[, …]",
    "CREATE ROLE r | DROP ROLE r",
    "GRANT [ROLE] r[, …] TO USER|GROUP|ROLE p[, …] [WITH ADMIN OPTION]",
    "REVOKE [ADMIN OPTION FOR] [ROLE] r[, …] FROM USER|GROUP|ROLE p[, …]",
)


class DdlParseError(ApplicationError):
    """The statement is not valid or not supported; names the position and what was expected."""

    def __init__(self, statement: str, position: int, problem: str, *, unsupported: str = "") -> None:
        line = statement.count("\n", 0, position) + 1
        column = position - (statement.rfind("\n", 0, position) + 1) + 1
        lead = "Unsupported statement" if unsupported else "Cannot parse the statement"
        details = {"position": position, "line": line, "column": column, "supported": list(SUPPORTED_STATEMENTS)}
        super().__init__(
            ErrorCode.DDL_PARSE_ERROR,
            f"{lead} at line {line}, column {column}: {problem}",
            {**details, "unsupported": unsupported} if unsupported else details,
        )
