"""
CONCATENATE and SET FILEFORMAT … WITH DATA of an ``s3a://`` partition (SeaweedFS) through the job path on the Spark
engine (local[2], a real ``spark-submit`` driver with no ``hadoop-aws``): the rewrite program reads and writes the
objects with Arrow/fsspec on the executors below a hidden prefix on the partition's own filesystem (also when the
table's root is on local disk), the swap moves the old prefix to the trash and the new one home, and the rows read
back from the bucket with pyarrow equal the rows before, value by value.
"""

from __future__ import annotations

import io
import json
import uuid
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest
from django.conf import settings
from django.core.management import call_command
from django.forms.models import model_to_dict
from django.utils import timezone

from catalog_admin.locations import filesystem_for, is_hidden
from catalog_admin.selectors.metastores import Metastore, get_metastore
from operations.choices import JobKind, JobState
from operations.models import AuditRecord, Execution, Job, JobLogEntry, Relocation
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.relocate import relocate_execute, relocations_cleanup
from operations.spark.programs import relocate as relocate_program
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.object_store import S3Server
from tests.operations.services.test_rewrite import DAY, ORDERS, as_strings, split_into_small_files

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db,
    pytest.mark.usefixtures("eager_jobs", "local_spark", "warehouse"),
    pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True),  # one Spark run is enough
]

CLICKS = (("click_id", "string"), ("campaign_id", "string"), ("user_agent", "string"), ("cost", "string"))


@pytest.fixture
def local_spark(settings) -> None:  # noqa: ANN001
    settings.CATALOG_SPARK_MASTER = "local[2]"


@pytest.fixture
def lake(metastore: Metastore, s3_filesystems: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A prefix of the bucket that is one of the metastore's governed roots (external data governed too)."""
    root = s3_filesystems.location(f"lake-{uuid.uuid4().hex[:8]}")
    configs = [
        replace(c, extra_roots=(*c.extra_roots, root), governs_external_data=True) if c.name == metastore.name else c
        for c in settings.METASTORE_CONFIGS
    ]
    monkeypatch.setattr(settings, "METASTORE_CONFIGS", configs)
    return root


def to_s3(metastore: Metastore, table: str, partition: str, name: str, lake: str, *, root_too: bool = True) -> str:
    """The partition relocated into the bucket (in this process), then (``root_too``) the table's root pointed at the
    prefix above it; the partition's new location."""
    root = f"{lake}/{table.replace('.', '_')}"
    metastore = get_metastore(metastore.name)
    moved = f"ALTER TABLE {table} PARTITION ({partition}) SET LOCATION '{root}' WITH DATA"  # lands at root/name
    preview = alter_preview_statement(metastore=metastore, statement=moved)
    assert preview.blockers == (), preview.blockers
    relocate_execute(
        preview=preview, actor="steward", source="cli", run_program=lambda p: relocate_program.run(None, p, [].append)
    )
    if not root_too:
        return f"{root}/{name}"
    rooted = alter_preview_statement(metastore=metastore, statement=f"ALTER TABLE {table} SET LOCATION '{root}'")
    assert rooted.blockers == (), rooted.blockers
    alter_execute(preview=rooted, actor="steward", source="cli")
    return f"{root}/{name}"


def rows_at(metastore: Metastore, location: str, file_format: str) -> list[tuple]:
    """Every row of the visible files below ``location``, read from the bucket with pyarrow (text: comma-split)."""
    filesystem = filesystem_for(location, metastore.name)
    rows: list[tuple] = []
    for entry in filesystem.list_files(location) or []:
        if is_hidden(entry.relative):
            continue
        with filesystem.open(entry.location) as handle:
            data = handle.read()
        if file_format == "text":
            rows += [tuple(line.split(",")) for line in data.decode().splitlines()]
        else:
            reader = pq.read_table if file_format == "parquet" else orc.read_table
            rows += [tuple(r.values()) for r in reader(io.BytesIO(data)).to_pylist()]
    return sorted(rows)


def trashed() -> str:
    """Where the rewrite's swap (the last relocation) moved its one unit's old directory."""
    (unit,) = Relocation.objects.latest("pk").units
    return unit["source"]


def run_job(metastore: Metastore, statement: str, secret: str) -> Job:
    """The statement executed as a job on the Spark engine, succeeded; the secret is in none of its files (job.json,
    driver.log, progress, manifest) nor in any row the job, execution, relocation and audit log wrote."""
    out = io.StringIO()
    call_command(
        "hive_ddl", statement, metastore=metastore.name, execute=True, reason="s3", actor="ops", stdout=out
    )  # fmt: skip
    job = Job.objects.get(kind__in=(JobKind.COMPACT, JobKind.CONVERT), program="rewrite")
    assert job.state == JobState.SUCCEEDED, (job.error, list(job.log_entries.values_list("message", flat=True)))
    work = Path(settings.CATALOG_SPARK_WORK_DIR) / f"job-{job.pk}"
    files = [path for path in work.rglob("*") if path.is_file()]
    assert {p.name for p in files} >= {"job.json", "driver.log", "progress.jsonl", "manifest.json"}
    assert [p for p in files if secret.encode() in p.read_bytes()] == []
    rows = [*Job.objects.all(), *JobLogEntry.objects.all(), *Execution.objects.all(), *Relocation.objects.all()]
    rows += AuditRecord.objects.all()
    assert [r for r in rows if secret in json.dumps(model_to_dict(r), default=str)] == []
    assert secret not in out.getvalue()
    return job


@pytest.mark.parametrize(
    ("action", "target"), [("CONCATENATE", "parquet"), ("SET FILEFORMAT ORC WITH DATA", "orc")], ids=["compact", "orc"]
)
def test_a_parquet_partition_on_s3_compacts_or_converts_on_spark(
    metastore: Metastore, lake: str, s3_filesystems: S3Server, action: str, target: str
) -> None:
    """The partition's own prefix holds the same rows (ids, decimals, strings) in the target format; the old objects
    are kept in the trash, in the bucket."""
    # given: credentials in the worker's environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)
    secret = s3_filesystems.secret_key
    [name] = split_into_small_files(metastore, "sales.orders", f"{DAY}/hour=0", "parquet", ORDERS)
    source = to_s3(metastore, "sales.orders", "dt='2024-01-02', hour=0", name, lake)
    before = rows_at(metastore, source, "parquet")
    assert source.startswith(f"{lake}/") and len(before) >= 3

    # when
    run_job(metastore, f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=0) {action}", secret)

    # then
    now = partition_locations(metastore, table_row(metastore, "sales", "orders").id)[name]
    assert now == source
    assert rows_at(metastore, now, target) == before
    assert rows_at(metastore, trashed(), "parquet") == before, "the old objects are kept"


def test_a_text_partition_on_s3_converts_to_parquet_on_spark(
    metastore: Metastore, lake: str, s3_filesystems: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Comma-separated text becomes Parquet with the same strings, value by value. The metastore's own S3 settings
    (endpoint and a named profile, no global ones, no AWS variables) reach the driver and its executors."""
    # given: only the metastore's profile (in a shared credentials file) knows the keys
    secret = s3_filesystems.secret_key
    profiles = tmp_path / "credentials"
    profiles.write_text(f"[lake]\naws_access_key_id = {s3_filesystems.access_key}\naws_secret_access_key = {secret}\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(profiles))
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    own = {"endpoint_url": s3_filesystems.endpoint, "region": "us-east-1", "profile": "lake"}
    configured = {"s3": {}, "hdfs": {}, "metastores": {metastore.name: {"s3": own}}}
    monkeypatch.setattr(settings, "CATALOG_FILESYSTEMS", configured)
    as_strings(metastore, "marketing", "clicks")
    [name] = split_into_small_files(metastore, "marketing.clicks", "dt=2024-01-01/hour=0", "text", CLICKS)
    source = to_s3(metastore, "marketing.clicks", "dt='2024-01-01', hour=0", name, lake)
    before = rows_at(metastore, source, "text")
    assert source.startswith(f"{lake}/") and len(before) >= 3

    # when
    partition = "PARTITION (dt='2024-01-01', hour=0)"
    run_job(metastore, f"ALTER TABLE marketing.clicks {partition} SET FILEFORMAT PARQUET WITH DATA", secret)

    # then
    now = partition_locations(metastore, table_row(metastore, "marketing", "clicks").id)[name]
    assert now == source
    assert rows_at(metastore, now, "parquet") == before
    assert rows_at(metastore, trashed(), "text") == before


def test_an_s3_partition_of_a_table_rooted_on_local_disk_is_staged_and_trashed_in_its_bucket(
    metastore: Metastore, lake: str, s3_filesystems: S3Server
) -> None:
    """Issue 25: the staging of an ``s3a://`` partition lived on the table root's filesystem (local disk), pulling the
    bucket's data down. Now every directory the job writes or moves is in the bucket, beside the partition; after the
    cleanup nothing hidden is left there."""
    # given: the table's root stays on local disk
    secret = s3_filesystems.secret_key
    [name] = split_into_small_files(metastore, "sales.orders", f"{DAY}/hour=0", "parquet", ORDERS)
    source = to_s3(metastore, "sales.orders", "dt='2024-01-02', hour=0", name, lake, root_too=False)
    assert table_row(metastore, "sales", "orders").sd.location.startswith("file:")
    before = rows_at(metastore, source, "parquet")

    # when
    job = run_job(metastore, "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=0) CONCATENATE", secret)

    # then
    assert job.plan["staging"] and all(s.startswith(f"{lake}/") for s in job.plan["staging"])
    assert all(u["destination"].startswith(f"{lake}/") for u in job.plan["units"])
    assert trashed().startswith(f"{lake}/")
    assert partition_locations(metastore, table_row(metastore, "sales", "orders").id)[name] == source
    assert rows_at(metastore, source, "parquet") == before

    # and when the retention time is over, nothing hidden is left in the bucket
    Relocation.objects.update(keep_until=timezone.now() - timedelta(seconds=1))
    assert [r.state for r in relocations_cleanup()] == [Relocation.State.CLEANED] * 2  # the move into it too
    listed = filesystem_for(lake, metastore.name).list_files(lake) or []
    assert listed and [f.relative for f in listed if is_hidden(f.relative)] == []
