"""
The scope of data work (``operations/planners/data_scope.py``), on the real metastore schemas and real files: the
deterministic sample and its stated basis, the small-file histogram, the duration from earlier jobs, the blockers.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings
from django.utils import timezone

from catalog_admin.db import allow_metastore_writes
from catalog_admin.locations import FileEntry
from catalog_admin.models import HiveLock, Partition, StorageDescriptor, Transaction, TransactionComponent
from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobState
from operations.containment import canonical
from operations.models import Job
from operations.planners.data_scope import (
    data_work_blockers,
    estimate_duration,
    measure,
    sample_indices,
    symlink_blockers,
)
from operations.planners.relocate import _units_below_root, relocated_location
from operations.services.alter import alter_preview_statement
from operations.specs import TableRef
from operations.table_state import read_table_state
from tests.fixtures.operations import location_of, path_of

MIB = 1024 * 1024
ENGINE = "local[2]"


def write_units(root: Path, sizes: list[list[int]]) -> list[str]:
    """One directory per entry of ``sizes``, holding files of those sizes; their locations."""
    units = []
    for number, files in enumerate(sizes):
        folder = root / f"dt={number:03d}"
        folder.mkdir(parents=True)
        for index, size in enumerate(files):
            (folder / f"part-{index:05d}").write_bytes(b"x" * size)
        units.append(location_of(folder))
    return units


def test_every_unit_is_listed_up_to_the_sample_size_and_the_histogram_buckets_files_by_size(
    metastore: Metastore, tmp_path: Path
) -> None:
    """Below the sample size the listing is exact; files fall in the table page's size buckets."""
    # given
    units = write_units(tmp_path, [[10, 20, 2 * MIB], [17 * MIB], []])

    # when
    scope = measure(metastore, units, sample=10)

    # then
    assert (scope.units, scope.sampled_units, scope.is_estimate) == (3, 3, False)
    assert (scope.files, scope.bytes) == (4, 30 + 19 * MIB)
    assert scope.histogram == (
        ("< 1 MiB", 2, 30),
        ("1–16 MiB", 1, 2 * MIB),
        ("16–64 MiB", 1, 17 * MIB),
        ("64–256 MiB", 0, 0),
        ("≥ 256 MiB", 0, 0),
    )
    assert scope.basis == f"listed all 3 unit(s): 4 files, {30 + 19 * MIB} bytes"
    chart = scope.as_dict()["file_sizes"]
    assert (chart["labels"][0], chart["series"]["files"][:3], chart["truncated"]) == ("< 1 MiB", [2, 1, 1], False)


def test_a_large_scope_is_estimated_from_an_evenly_spaced_deterministic_sample_and_says_so(
    metastore: Metastore, tmp_path: Path
) -> None:
    """10 of 100 units are listed (first and last included, the same ones every time), scaled by 10."""
    # given: unit i holds i+1 files of 100 bytes
    units = write_units(tmp_path, [[100] * (i + 1) for i in range(100)])
    picked = sample_indices(100, 10)

    # when
    first, again = measure(metastore, units, sample=10), measure(metastore, units, sample=10)

    # then
    assert picked == [0, 11, 22, 33, 44, 55, 66, 77, 88, 99]
    assert first == again
    assert (first.units, first.sampled_units, first.is_estimate) == (100, 10, True)
    assert first.sample_files == sum(i + 1 for i in picked) == 505
    assert (first.files, first.bytes) == (5050, 505_000)
    assert first.basis == (
        "estimate: 10 of 100 units listed (evenly spaced by name), 505 files and 50500 bytes, scaled by 10.00"
    )
    assert first.file_sizes_chart().truncated is True


@pytest.mark.parametrize("size", [0, -5])
def test_a_sample_of_no_unit_is_refused_naming_the_setting(metastore: Metastore, tmp_path: Path, size: int) -> None:
    units = write_units(tmp_path, [[1]])

    with pytest.raises(
        ImproperlyConfigured, match=f"CATALOG_RELOCATION_SAMPLE_PARTITIONS must be at least 1.*not {size}"
    ):
        measure(metastore, units, sample=size)


def test_sample_indices_cover_small_and_degenerate_sizes() -> None:
    assert sample_indices(3, 10) == [0, 1, 2]
    assert sample_indices(5, 1) == [0]
    assert sample_indices(0, 10) == []
    assert sample_indices(7, 2) == [0, 6]


def finished_job(
    kind: str, engine: str, size: int, seconds: float, state: str = JobState.SUCCEEDED, program: str = "relocate"
) -> Job:
    end = timezone.now()
    return Job.objects.create(
        kind=kind,
        program=program,
        state=state,
        spark_master=engine,
        bytes_done=size,
        started_at=end - timedelta(seconds=seconds),
        finished_at=end,
    )


@pytest.mark.django_db
def test_duration_is_bytes_over_the_median_throughput_of_earlier_jobs_of_that_kind_on_that_engine() -> None:
    """Three relocate jobs on local[2] at 10, 20 and 60 MB/s: median 20 MB/s; other kinds, programs, engines,
    failures and jobs that copied nothing do not count."""
    # given
    for rate in (10, 20, 60):
        finished_job("relocate", ENGINE, rate * 1_000_000 * 10, 10)
    finished_job("relocate", "spark://elsewhere:7077", 1_000_000, 1_000)
    finished_job("compact", ENGINE, 1, 1_000)
    finished_job("relocate", ENGINE, 1, 1_000, state=JobState.FAILED)
    finished_job("relocate", ENGINE, 1, 1_000, program="rewrite")  # a rewrite: its own basis
    Job.objects.create(kind="relocate", state=JobState.SUCCEEDED, spark_master=ENGINE)

    # when
    estimate = estimate_duration("relocate", 400_000_000, engine=ENGINE, program="relocate")

    # then
    assert (estimate.jobs, estimate.seconds) == (3, 20.0)
    assert estimate.median_bytes_per_second == pytest.approx(20_000_000)
    assert estimate.basis == "from 3 earlier job(s) on local[2], median 19.1 MiB/s"  # 20,000,000 B/s in IEC units


@pytest.mark.django_db
def test_without_earlier_jobs_there_is_no_basis_yet() -> None:
    estimate = estimate_duration("relocate", 1_000, engine=ENGINE)

    assert (estimate.seconds, estimate.jobs) == (None, 0)
    assert estimate.basis == "no basis yet: no finished job of this kind on local[2]"


def phased_job(
    kind: str, startup: float, work: float, swap: float, size: int, units: int, *, engine: str = ENGINE,
    state: str = JobState.SUCCEEDED, attempts: int = 1,
) -> Job:  # fmt: skip
    """A finished job whose phases were measured: Spark's start-up, the work of ``size`` bytes, the swap of
    ``units``."""
    end = timezone.now()
    committing = end - timedelta(seconds=swap)
    work_started = committing - timedelta(seconds=work)
    return Job.objects.create(
        kind=kind, program="relocate", state=state, spark_master=engine, attempts=attempts, bytes_done=size,
        partitions_total=units, started_at=work_started - timedelta(seconds=startup), work_started_at=work_started,
        committing_at=committing, finished_at=end,
    )  # fmt: skip


@pytest.mark.django_db
def test_the_estimate_names_spark_start_up_the_copy_and_the_swap_each_from_earlier_runs() -> None:
    """Issue 29: one throughput over whole runs mixed Spark's start-up into the copy. Three relocations of 100, 200
    and 400 MB (10, 20, 40 s of copy; 1, 2, 4 s of swap for 10, 20, 40 units) after 20 s of start-up each: 800 MB
    over 80 units is 20 s start-up + 80 s copy + 8 s swap; a failed job's start-up counts (the engine started), its
    other phases and a resumed attempt's do not."""
    # given
    for scale in (1, 2, 4):
        phased_job("relocate", 20, 10 * scale, scale, 100_000_000 * scale, 10 * scale)
    phased_job("relocate", 20, 999, 999, 1, 1, state=JobState.FAILED)
    phased_job("relocate", 20, 999, 999, 1, 1, attempts=2)
    phased_job("compact", 20, 1, 1, 100, 1)  # another kind: its start-up only

    # when
    estimate = estimate_duration("relocate", 800_000_000, engine=ENGINE, units=80)

    # then
    phases = {p.name: p for p in estimate.phases}
    assert [p.label for p in estimate.phases] == ["Spark start-up", "copy", "swap"]
    assert (phases["startup"].seconds, phases["work"].seconds, phases["swap"].seconds) == (20.0, 80.0, 8.0)
    assert (estimate.seconds, estimate.jobs) == (108.0, 3)
    assert estimate.median_bytes_per_second == pytest.approx(10_000_000)
    assert estimate.basis == "Spark start-up + copy + swap, from 3 earlier job(s) on local[2]"
    assert "median of 6 earlier start-up(s) on local[2]" in phases["startup"].basis
    assert estimate.as_dict()["phases"][1] == {
        "name": "work", "label": "copy", "seconds": 80.0, "basis": phases["work"].basis,
    }  # fmt: skip


@pytest.mark.django_db
def test_an_engine_that_only_started_other_jobs_gives_the_start_up_and_says_what_has_no_basis() -> None:
    # given
    phased_job("analyze", 15, 1, 1, 100, 1)

    # when
    estimate = estimate_duration("relocate", 1_000, engine=ENGINE, units=1)

    # then
    assert [(p.name, p.seconds) for p in estimate.phases] == [("startup", 15.0), ("work", None), ("swap", None)]
    assert estimate.seconds is None
    assert estimate.basis == (
        "Spark start-up + copy + swap, from 0 earlier job(s) on local[2] (no basis yet for copy, swap)"
    )


def test_the_fitted_line_ignores_one_slow_run_and_never_goes_negative() -> None:
    from operations.estimates import fitted

    points = [(1.0, 10.0), (2.0, 12.0), (3.0, 14.0), (4.0, 100.0)]
    assert fitted(points, 5.0, proportional=True) == pytest.approx(8.0 + 2.0 * 5.0, rel=0.3)
    assert fitted([(10.0, 5.0), (20.0, 1.0)], 40.0, proportional=False) == pytest.approx(3.0)  # no negative slope
    assert fitted([(10.0, 5.0)], 40.0, proportional=True) == 20.0  # one size: its rate
    assert fitted([(10.0, 5.0)], 40.0, proportional=False) == 5.0  # one size: its time


@override_settings(CATALOG_SPARK_MASTER=ENGINE)
def test_the_relocate_preview_carries_the_scope_the_histogram_and_the_duration_basis(
    metastore: Metastore, warehouse: Path
) -> None:
    """The frozen preview holds the listing's basis, the small-file chart and the estimate from earlier jobs."""
    # given
    finished_job("relocate", ENGINE, 50_000_000, 1)
    target = location_of(warehouse / "sales.db" / "orders_scoped")

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{target}' WITH DATA",
    )

    # then
    copy = preview.data_copy
    assert preview.blockers == ()
    assert (copy.scope.files, copy.scope.bytes) == (copy.files, copy.bytes)
    assert sum(files for _, files, _ in copy.scope.histogram) == copy.files
    assert copy.duration.basis == "from 1 earlier job(s) on local[2], median 47.7 MiB/s"
    assert copy.estimated_seconds == round(copy.bytes / 50_000_000, 1)
    summary = preview.as_dict()["data_copy"]
    assert summary["scope"]["file_sizes"]["labels"][0] == "< 1 MiB"
    assert summary["duration"]["jobs"] == 1
    codes = {w.code for w in preview.warnings}
    assert {"engines_cache_locations", "downstream_readers"} <= codes
    assert "INVALIDATE METADATA sales.orders" in next(
        w.message for w in preview.warnings if w.code == "engines_cache_locations"
    )


@override_settings(CATALOG_RELOCATION_SAMPLE_PARTITIONS=2)
def test_a_sampled_relocate_preview_states_the_sample(metastore: Metastore, warehouse: Path) -> None:
    target = location_of(warehouse / "sales.db" / "orders_sampled")

    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{target}' WITH DATA",
    )

    copy = preview.data_copy
    assert (copy.is_sampled, copy.sampled_units, copy.scope.is_estimate) == (True, 2, True)
    assert copy.scope.basis.startswith(f"estimate: 2 of {len(copy.units)} units listed (evenly spaced by name)")
    sampled = next(w for w in preview.warnings if w.code == "size_sampled")
    assert sampled.message.startswith(f"Size estimated from 2 of {len(copy.units)} partitions")


def insert(metastore: Metastore, model: type, **values: object) -> None:
    """One row of ``model`` with the columns ``metastore``'s schema has (TXN_TYPE, HL_TXNID… came with 3.0)."""
    missing = set(metastore.schema.missing_fields(model))
    fields = [f for f in model._meta.concrete_fields if f.name in values and f.name not in missing]
    row = model(**{f.name: values[f.name] for f in fields})
    model.objects.using(metastore.alias)._insert([row], fields=fields, using=metastore.alias)


def open_lock_and_transaction(metastore: Metastore, database: str, table: str) -> None:
    """A lock and an open transaction's component on the table, as Hive's TxnHandler writes them."""
    now = int(timezone.now().timestamp() * 1000)
    with allow_metastore_writes():
        insert(metastore, Transaction, id=990001, state="o", started=now, last_heartbeat=now, user="etl", host="w1")
        insert(metastore, HiveLock, ext_id=990001, int_id=1, txn_id=990001, database=database, table=table,
               state="a", type="r", last_heartbeat=now, acquired_at=now, user="etl", host="w1")  # fmt: skip
        insert(metastore, TransactionComponent, txn_id=990001, database=database, table=table, partition="",
               operation_type="i")  # fmt: skip


def test_open_locks_and_transactions_on_the_table_block_the_relocation(metastore: Metastore, warehouse: Path) -> None:
    """HIVE_LOCKS and TXN_COMPONENTS rows on a plain table refuse the data work, naming what to wait for."""
    # given
    open_lock_and_transaction(metastore, "sales", "customers")

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.customers SET LOCATION '{location_of(warehouse / 'moved')}' WITH DATA",
    )

    # then
    assert [(b.code, b.message) for b in preview.blockers] == [
        ("open_transactions", "1 open transaction(s) write to sales.customers. Relocate after they end."),
        ("locks_held", "1 lock(s) are held or waited for on sales.customers. Relocate after they end."),
    ]
    assert preview.steps == ()
    assert preview.data_copy is None


def test_a_transactional_table_is_refused_and_pointed_to_compaction(metastore: Metastore, warehouse: Path) -> None:
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.payments_acid SET LOCATION '{location_of(warehouse / 'p')}' WITH DATA",
    )

    transactional = next(b for b in preview.blockers if b.code == "transactional_rewrite")
    assert "sales.payments_acid is transactional" in transactional.message
    assert "COMPACT 'major'" in transactional.message
    assert preview.steps == ()


def test_a_rewrite_of_a_bucketed_table_is_blocked_but_a_copy_is_not(metastore: Metastore) -> None:
    """Compact and convert rewrite files (bucketing breaks); relocate copies them as they are (it stays)."""
    # given
    state = read_table_state(metastore, TableRef("sales", "payments_acid"))

    # when
    rewrite = data_work_blockers(metastore, state, operation="compact", rewrite=True)
    copy = data_work_blockers(metastore, state, operation="relocate", rewrite=False)

    # then
    bucketing = [b.message for b in rewrite if b.code == "bucketing_rewrite"]
    assert bucketing == [
        "sales.payments_acid is bucketed (CLUSTERED BY payment_id): rewriting its files would break the "
        "one-file-per-bucket layout that bucketed joins and sampling rely on."
    ]
    assert "bucketing_rewrite" not in {b.code for b in copy}
    assert "transactional_rewrite" in {b.code for b in copy}


@pytest.mark.parametrize("root", ["file:/w/t", "file:///w/t", "/w/t", "s3a://bucket/w/t"])
@pytest.mark.parametrize("below", ["/dt=1/h=2", "/dt=1//h=2", "/./dt=1", "/dt=1/../dt=2", "/dt=1/", "/.hidden/x"])
def test_the_relocation_units_canonical_shortcut_spells_locations_as_canonical_does(root: str, below: str) -> None:
    """A whole table's units take the canonical root plus the path below it; odd paths fall back to canonical."""
    [unit] = _units_below_root(root, "file:/new/", [{"name": "dt=1", "location": root + below}])
    assert (unit.source, unit.destination) == (
        canonical(root + below),
        relocated_location(root, "file:/new/", root + below),
    )


@pytest.fixture
def passwd(tmp_path: Path) -> Path:
    """A file outside every governed root (/etc/passwd) that must never be copied into a table's data."""
    path = tmp_path / "etc" / "passwd"
    path.parent.mkdir()
    path.write_text("root:x:0:0:root:/root:/bin/bash\n")
    return path


def orders_partition(metastore: Metastore, name: str) -> Path:
    return path_of(Partition.objects.on(metastore, "sd").get(table__name="orders", name=name).sd.location)


@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{target}' WITH DATA",
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE",
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET FILEFORMAT ORC WITH DATA",
    ],
    ids=["relocate", "concatenate", "convert"],
)
@pytest.mark.parametrize("link", ["file", "directory", "partition"])
def test_a_symlink_in_the_data_blocks_relocation_and_rewrites_naming_it(
    metastore: Metastore, warehouse: Path, passwd: Path, statement: str, link: str
) -> None:
    """Issue 25, case 4: a link in a partition directory (to a file, to a directory, or the partition directory
    itself a link) is a blocker naming it: nothing outside is copied into the table's data."""
    # given
    partition = orders_partition(metastore, "dt=2024-01-02/hour=3")
    if link == "partition":
        moved = partition.parent / "hour=3-real"
        partition.rename(moved)
        partition.symlink_to(moved)
        named = partition
    else:
        named = partition / ("leak" if link == "file" else "leaks")
        named.symlink_to(passwd if link == "file" else passwd.parent)
    target = location_of(warehouse / "sales.db" / "orders_moved")

    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement.format(target=target))

    # then
    links = [f for f in preview.blockers if f.code == "symlink_in_data"]
    assert len(links) == 1, preview.blockers
    assert location_of(named) in links[0].message
    assert not preview.steps


def test_a_symlink_blocker_names_the_first_links_and_counts_the_rest() -> None:
    """Thousands of links make one bounded blocker: ten named (sorted), the rest counted."""
    # given
    listing = [FileEntry(f"file:/wh/t/link-{n:04d}", f"link-{n:04d}", 0, symlink=True) for n in range(25)]
    listing.append(FileEntry("file:/wh/t/data", "data", 5))

    # when
    blockers = symlink_blockers([listing], "relocate")

    # then
    assert [b.code for b in blockers] == ["symlink_in_data"]
    assert "file:/wh/t/link-0009" in blockers[0].message
    assert "file:/wh/t/link-0010" not in blockers[0].message
    assert "25 symbolic link(s)" in blockers[0].message and "and 15 more" in blockers[0].message
    assert "file:/wh/t/data" not in blockers[0].message


NO_S3 = {"s3": {"endpoint_url": "http://127.0.0.1:9"}, "hdfs": {}, "metastores": {}}


@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AWS variable and no shared credentials or config file: only what the console's settings name."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))


def reach(preview) -> list[str]:  # noqa: ANN001
    return [b.message for b in preview.blockers if b.code == "engine_unreachable"]


@pytest.mark.usefixtures("no_aws")
def test_a_job_onto_s3_without_credentials_for_the_metastore_is_blocked(
    metastore: Metastore, settings, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
) -> None:  # fmt: skip
    """An S3 endpoint but no keys (no profile, no AWS variables) for the metastore: the relocation's preview names
    it; with the AWS variables it is not blocked for that reason."""
    # given
    settings.CATALOG_FILESYSTEMS = NO_S3
    statement = "ALTER TABLE sales.customers SET LOCATION 's3a://lake/customers' WITH DATA"

    # when
    blocked = alter_preview_statement(metastore=metastore, statement=statement)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "id")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    allowed = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    [message] = reach(blocked)
    assert "s3a:// (s3a://lake/customers)" in message and f"metastore {metastore.name}" in message
    assert f"METASTORE_S3_PROFILE_{metastore.name.upper()}" in message
    assert reach(allowed) == []


@pytest.mark.usefixtures("no_aws")
def test_a_rewrite_of_a_partition_on_s3_whose_metastore_profile_has_no_keys_is_blocked(
    metastore: Metastore, settings  # noqa: ANN001
) -> None:  # fmt: skip
    """The metastore's own profile (METASTORE_S3_PROFILE_<NAME>) that botocore cannot resolve: a CONCATENATE of a
    partition stored on S3 is blocked, naming the profile."""
    # given
    own = {"endpoint_url": "http://127.0.0.1:9", "profile": "lake"}
    settings.CATALOG_FILESYSTEMS = {**NO_S3, "metastores": {metastore.name: {"s3": own}}}
    orders = read_table_state(metastore, TableRef("sales", "orders"))
    with allow_metastore_writes():
        part = Partition.objects.using(metastore.alias).filter(table_id=orders.table_id).order_by("name").first()
        StorageDescriptor.objects.using(metastore.alias).filter(pk=part.sd_id).update(location="s3a://lake/o/p")
        statement = f"ALTER TABLE sales.orders PARTITION ({_spec_of(part.name)}) CONCATENATE"

        # when
        preview = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    assert len(reach(preview)) == 1, [(b.code, b.message[:200]) for b in preview.blockers]
    assert "profile 'lake' has no credentials" in reach(preview)[0]


def _spec_of(name: str) -> str:
    return ", ".join(f"{key}='{value}'" for key, _, value in (p.partition("=") for p in name.split("/")))


def test_a_job_onto_hdfs_without_hadoop_conf_dir_is_blocked(
    metastore: Metastore, settings, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
) -> None:  # fmt: skip
    """hdfs:// with no HADOOP_CONF_DIR: the relocation's preview says the job would not find the cluster."""
    # given
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    settings.CATALOG_FILESYSTEMS = {"s3": {}, "hdfs": {}, "metastores": {}}

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers SET LOCATION 'hdfs://nn:8020/w/c' WITH DATA"
    )

    # then
    [message] = reach(preview)
    assert message.startswith("The data job cannot reach hdfs:// (hdfs://nn:8020/w/c): HADOOP_CONF_DIR is not set")
