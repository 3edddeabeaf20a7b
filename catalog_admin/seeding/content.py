"""The options, the report and the declarative demo content: databases, tables, formats and words."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

__all__ = (
    "ABORTED_PARTITION",
    "ACID_JOBS",
    "ACID_PAYMENTS",
    "BENCH_COLUMNS",
    "BENCH_FIRST_DAY",
    "DAYS",
    "DEMO_DATABASES",
    "DEMO_TABLES",
    "FORMATS",
    "HOURLY",
    "HOURS_BY_NAME",
    "NEXT_WRITE_IDS",
    "OPEN_PARTITION",
    "PARTITION_KEYS",
    "PARTITION_SPACES",
    "SCALE_COLUMNS",
    "SCALE_SPACES",
    "SCALE_SPEC",
    "VIEW_SQL",
    "WORDS",
    "DatabaseSpec",
    "SeedOptions",
    "SeedReport",
    "StorageFormat",
    "TableSpec",
)


@dataclass(frozen=True)
class SeedOptions:
    """What to write: the demo content always, plus optional scale content."""

    warehouse: str
    tables: int = 0
    big_table_partitions: int = 0
    col_stats: int = 0
    seed: int = 42


@dataclass(frozen=True)
class SeedReport:
    """Rows inserted per metastore table, data files written, demo tables skipped, notes, elapsed seconds."""

    counts: dict[str, int]
    files: int
    skipped: tuple[str, ...]
    notes: tuple[str, ...]
    elapsed: float


@dataclass(frozen=True)
class StorageFormat:
    input_format: str
    output_format: str
    serde_lib: str | None
    serde_params: tuple[tuple[str, str], ...] = ()


FORMATS = {
    "parquet": StorageFormat(
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
        (("serialization.format", "1"),),
    ),
    "text": StorageFormat(
        "org.apache.hadoop.mapred.TextInputFormat",
        "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
        (("field.delim", ","), ("serialization.format", ",")),
    ),
    "orc": StorageFormat(
        "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcSerde",
        (("serialization.format", "1"),),
    ),
    "view": StorageFormat(
        "org.apache.hadoop.mapred.SequenceFileInputFormat",
        "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat",
        None,
    ),
}


@dataclass(frozen=True)
class DatabaseSpec:
    name: str
    description: str
    owner: str
    owner_type: str = "USER"
    params: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TableSpec:
    database: str
    name: str
    columns: tuple[tuple[str, str], ...]
    fmt: str
    kind: str = "MANAGED_TABLE"
    owner: str = "etl"
    partitions: tuple[tuple[str, int], ...] = ()  # (dt, hour) values
    acid: bool = False
    buckets: int = -1
    bucket_columns: tuple[str, ...] = ()
    sort_columns: tuple[str, ...] = ()
    location: str = ""  # relative to the warehouse; default <database root>/<table>
    relocated: tuple[str, ...] = ()  # partitions stored under `relocated_root`, outside the table root
    relocated_root: str = ""
    missing: tuple[str, ...] = ()  # partitions whose directory is not written
    view_text: tuple[str, str] = ("", "")  # original, expanded
    comment: str = ""
    analyst_select: bool = True


DEMO_DATABASES = (
    DatabaseSpec("default", "Default Hive database", "public", "ROLE"),
    DatabaseSpec("sales", "Orders, customers and payments", "alice", params=(("owner.team", "sales-analytics"),)),
    DatabaseSpec("marketing", "Campaigns and clicks", "growth", "ROLE", (("owner.team", "growth"), ("pii", "false"))),
    DatabaseSpec("ops", "Platform operations", "hive", params=(("owner.team", "platform"), ("retention.days", "90"))),
)
DAYS = ("2024-01-01", "2024-01-02", "2024-01-03")
HOURLY = tuple((day, hour) for day in DAYS for hour in (0, 3, 6, 9))
PARTITION_KEYS = (("dt", "string"), ("hour", "int"))
VIEW_SQL = (
    "SELECT c.name, count(*) AS clicks, sum(k.cost) AS cost FROM marketing.clicks k"
    " JOIN marketing.campaigns c ON k.campaign_id = c.campaign_id GROUP BY c.name",
    "SELECT `c`.`name`, count(*) AS `clicks`, sum(`k`.`cost`) AS `cost` FROM `marketing`.`clicks` `k`"
    " JOIN `marketing`.`campaigns` `c` ON `k`.`campaign_id` = `c`.`campaign_id` GROUP BY `c`.`name`",
)
DEMO_TABLES = (
    TableSpec("default", "scratch_notes", (("id", "int"), ("note", "string")), "text", owner="hive"),
    TableSpec(
        "sales",
        "orders",
        (("id", "bigint"), ("customer_id", "bigint"), ("amount", "decimal(10,2)"), ("status", "string")),
        "parquet",
        partitions=HOURLY,
        relocated=("dt=2024-01-01/hour=0", "dt=2024-01-01/hour=3"),
        relocated_root="archive/sales/orders",
        missing=("dt=2024-01-03/hour=9",),
        comment="One row per order",
    ),
    TableSpec(
        "sales",
        "customers",
        (("id", "bigint"), ("name", "string"), ("email", "string"), ("country", "string"), ("signup_date", "date")),
        "parquet",
        owner="alice",
    ),
    TableSpec(
        "sales",
        "payments_acid",
        (("payment_id", "bigint"), ("order_id", "bigint"), ("amount", "decimal(10,2)"), ("paid_at", "timestamp")),
        "orc",
        acid=True,
        buckets=4,
        bucket_columns=("payment_id",),
        sort_columns=("paid_at",),
        analyst_select=False,
    ),
    TableSpec(
        "marketing",
        "campaigns",
        (("campaign_id", "int"), ("name", "string"), ("channel", "string"), ("budget", "double")),
        "text",
        kind="EXTERNAL_TABLE",
        owner="growth",
        location="external/marketing/campaigns",
    ),
    TableSpec(
        "marketing",
        "clicks",
        (("click_id", "bigint"), ("campaign_id", "int"), ("user_agent", "string"), ("cost", "double")),
        "text",
        kind="EXTERNAL_TABLE",
        owner="growth",
        partitions=HOURLY,
        location="external/marketing/clicks",
        relocated=("dt=2024-01-02/hour=6",),
        relocated_root="external/marketing/clicks_backfill",
    ),
    TableSpec(
        "marketing",
        "campaign_performance",
        (("name", "string"), ("clicks", "bigint"), ("cost", "double")),
        "view",
        kind="VIRTUAL_VIEW",
        owner="growth",
        view_text=VIEW_SQL,
    ),
    TableSpec(
        "ops",
        "job_runs_acid",
        (("job_id", "bigint"), ("status", "string"), ("duration_ms", "bigint"), ("succeeded", "boolean")),
        "orc",
        owner="hive",
        partitions=tuple((day, hour) for day in DAYS[:2] for hour in (0, 6)),
        acid=True,
        buckets=2,
        bucket_columns=("job_id",),
        analyst_select=False,
    ),
)
ACID_JOBS, ACID_PAYMENTS = ("ops", "job_runs_acid"), ("sales", "payments_acid")
NEXT_WRITE_IDS = {ACID_JOBS: 4, ACID_PAYMENTS: 3}  # write ids 1 and 2 committed; 3 open on job_runs_acid
OPEN_PARTITION, ABORTED_PARTITION = "dt=2024-01-02/hour=6", "dt=2024-01-01/hour=0"
WORDS = {
    "status": ("NEW", "PAID", "SHIPPED", "CANCELLED", "RUNNING", "FAILED", "DONE"),
    "country": ("DE", "FR", "US", "JP", "BR", "IN"),
    "channel": ("search", "social", "email", "display"),
    "user_agent": ("Mozilla/5.0", "curl/8.5", "okhttp/4.12", "Safari/17.2"),
    "name": ("Ada", "Grace", "Linus", "Margaret", "Ken", "Barbara", "spring_sale", "winter_promo"),
    "note": ("todo", "check totals", "rerun backfill", "ok"),
}
SCALE_SPACES = ("MTable", "MStorageDescriptor", "MSerDeInfo", "MColumnDescriptor")
PARTITION_SPACES = ("MPartition", "MStorageDescriptor", "MSerDeInfo")
SCALE_COLUMNS = (("id", "bigint"), ("name", "string"), ("value", "double"))
SCALE_SPEC = TableSpec("", "", SCALE_COLUMNS, "text", owner="bench")
BENCH_FIRST_DAY = date(2024, 2, 1)  # after the demo partitions, so the bulk partition names sort last
HOURS_BY_NAME = tuple(sorted(range(24), key=str))  # 0, 1, 10, 11 … 19, 2, 20 …: names ascend with the index
BENCH_COLUMNS = (
    ("event_id", "bigint"),
    ("user_id", "bigint"),
    ("event_type", "string"),
    ("amount", "double"),
    ("country", "string"),
    ("session_id", "string"),
    ("latency_ms", "int"),
    ("payload", "string"),
)
