"""
Relocations end to end on the Spark engine (a real ``spark-submit`` driver): an approved request of a partitioned
table, and ``hive_ddl --execute`` of a whole table, on local[2] and on a real standalone cluster; cancel, and kill -9
of the driver mid-copy then resume. Jobs run eagerly
(``CATALOG_JOBS_MODE="eager"``: ``run_job`` in this process when the request's transaction commits, the very function
a worker process runs), since the swap writes the metastore inside the test's transaction, which a worker process
could not see or roll back.
"""

from __future__ import annotations

import filecmp
import hashlib
import io
import json
import os
import shutil
import signal
import threading
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobState
from operations.models import ChangeRequest, Execution, Job, Relocation
from operations.services import jobs
from operations.services.jobs import job_resume, run_job
from operations.services.relocate_jobs import RELOCATE
from operations.services.stuck_jobs import settle_stuck_jobs
from operations.spark.engine import DriverFiles
from operations.spark.entry import process_alive
from tests.fixtures.factories import make_user, partition_locations, table_row
from tests.fixtures.operations import location_of, path_of
from tests.fixtures.spark_cluster import StandaloneCluster
from tests.fixtures.spark_connect import ConnectServer
from tests.fixtures.workers import wait_for
from tests.operations.services.test_relocate_jobs import DAY, executed

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db,
    pytest.mark.usefixtures("eager_jobs", "local_spark"),
    pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True),  # one Spark run each is enough
]


@pytest.fixture
def local_spark(settings) -> None:  # noqa: ANN001
    settings.CATALOG_SPARK_MASTER = "local[2]"


@dataclass(frozen=True)
class PausedRelocation:
    """A queued relocation of sales.orders' day copying one partition per batch and pausing after each, with what the
    checks compare: the partitions' locations and their sources' bytes before the job ran."""

    request: ChangeRequest
    job: Job
    metastore: Metastore
    target: Path
    units: list[str]
    table_id: int
    before: dict[str, str]
    sources: dict[str, Path]
    source_bytes: list[dict[str, str]]
    work: Path

    def swapped_every_partition_once_verified(self) -> None:
        """Every partition points at its copy, and each copy is identical to its untouched source."""
        after = partition_locations(self.metastore, self.table_id)
        assert {n: after[n] for n in self.units} == {n: location_of(self.target / n) for n in self.units}
        copies = tree_digest(self.target / n for n in self.units)
        assert tree_digest(self.sources.values()) == self.source_bytes == copies


def paused_relocation(
    people: dict[str, User], metastore: Metastore, warehouse: Path, *, pause_seconds: int
) -> PausedRelocation:
    target = warehouse / "sales.db" / "orders_moved"
    request, job = executed(people, metastore, target, lambda execute: nullcontext())
    Job.objects.filter(pk=job.pk).update(plan={**job.plan, "batch_files": 1, "pause_seconds": pause_seconds})
    units = [unit["key"] for unit in job.plan["units"]]
    orders = table_row(metastore, "sales", "orders")
    before = partition_locations(metastore, orders.id)
    sources = {n: path_of(loc) for n, loc in before.items() if n in units}
    work = Path(settings.CATALOG_SPARK_WORK_DIR) / f"job-{job.pk}"
    shutil.rmtree(work, ignore_errors=True)  # an earlier run's job of the same id left its files
    job = Job.objects.get(pk=job.pk)
    return PausedRelocation(
        request, job, metastore, target, units, orders.id, before, sources, tree_digest(sources.values()), work
    )


def test_an_approved_relocation_copies_on_spark_verifies_swaps_and_keeps_the_source(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """The request's job runs the relocate program on Spark, every file copied and verified, then one transaction
    re-points the partitions; the request succeeds, the source stays, and its page shows until when, with the job's
    page linked."""
    # given
    target = warehouse / "sales.db" / "orders_moved"
    orders = table_row(metastore, "sales", "orders")
    moving = {n: loc for n, loc in partition_locations(metastore, orders.id).items() if n.startswith(DAY + "/")}
    sources = {n: path_of(loc) for n, loc in moving.items() if path_of(loc).is_dir()}
    assert sources and any(p.is_file() for d in sources.values() for p in d.rglob("*")), "real files to copy"

    # when
    request, job = executed(people, metastore, target, django_capture_on_commit_callbacks)

    # then: the job and the request ended through the lifecycle
    job = Job.objects.get(pk=job.pk)
    request.refresh_from_db()
    assert (job.kind, job.state, request.state) == (RELOCATE, JobState.SUCCEEDED, "succeeded"), job.error
    assert job.spark_app_id.startswith("local-") and job.driver_pid
    assert job.result["execution"] == request.execution_id
    # the metastore points at the copies, which are there and identical; the source is kept
    now = partition_locations(metastore, orders.id)
    assert {n: now[n] for n in moving} == {n: location_of(target / n) for n in moving}
    for name, source in sources.items():
        comparison = filecmp.dircmp(source, target / name)
        assert not (comparison.diff_files or comparison.left_only or comparison.right_only), name
        assert any(source.iterdir())
    relocation = Relocation.objects.get(execution=request.execution)
    assert relocation.state == Relocation.State.SWAPPED
    assert relocation.files == sum(len(u["files"]) for u in job.plan["units"]) > 0
    assert Execution.objects.get(pk=request.execution_id).state == Execution.State.SUCCEEDED
    # the request page
    client = Client()
    client.force_login(people["steward"])
    page = client.get(reverse("operations:detail", args=[request.pk])).content.decode()
    assert f"{relocation.keep_until:%Y-%m-%d %H:%M} UTC" in page and 'id="relocation-keep-until"' in page
    assert reverse("operations:job-detail", args=[job.pk]) in page


def test_hive_ddl_executes_a_relocation_on_spark_printing_its_progress(metastore: Metastore, warehouse: Path) -> None:
    """``hive_ddl --execute`` runs the relocation job to its end, prints the driver's progress, and returns only once
    the copy was verified and the table swapped."""
    # given
    customers = table_row(metastore, "sales", "customers")
    source = path_of(customers.sd.location)
    target = warehouse / "sales.db" / "customers_v2"
    out = io.StringIO()

    # when
    call_command(
        "hive_ddl", f"ALTER TABLE sales.customers SET LOCATION '{location_of(target)}' WITH DATA",
        metastore=metastore.name, execute=True, reason="new volume", actor="ops", stdout=out,
    )  # fmt: skip

    # then
    printed = out.getvalue()
    job = Job.objects.get(kind=RELOCATE)
    assert job.state == JobState.SUCCEEDED and job.change_request is None
    assert f"Relocation job #{job.pk}" in printed and "Driver started on local[2]" in printed
    assert f"Copied, verified and swapped as execution #{job.result['execution']}" in printed
    assert table_row(metastore, "sales", "customers").sd.location == location_of(target)
    assert not filecmp.dircmp(source, target).diff_files and any(target.iterdir())
    execution = Execution.objects.get(pk=job.result["execution"])
    assert (execution.source, execution.actor, execution.reason) == ("cli", "ops", "new volume")
    assert "Copy duration: unknown (no basis yet: no finished job of this kind on local[2])" in printed
    # the finished job is the next relocation's basis, phase by phase (its start-up, copy and swap, on the same engine)
    again = io.StringIO()
    call_command("hive_ddl", f"ALTER TABLE sales.customers SET LOCATION '{location_of(source)}_back' WITH DATA",
                 metastore=metastore.name, stdout=again)  # fmt: skip
    assert "Copy duration: about " in again.getvalue()
    assert "(Spark start-up + copy + swap, from 1 earlier job(s) on local[2])" in again.getvalue()
    assert "  Spark start-up: about " in again.getvalue() and "  swap: about " in again.getvalue()
    ran = Job.objects.get(pk=job.pk)
    assert ran.started_at < ran.work_started_at < ran.committing_at < ran.finished_at


def test_a_relocation_runs_on_a_standalone_cluster_and_swaps_once_verified(
    metastore: Metastore,
    warehouse: Path,
    spark_standalone: StandaloneCluster,
    settings,  # noqa: ANN001
) -> None:
    """The same relocate program through ``spark-submit`` on a standalone master: the cluster's executors copy and
    verify every file (xxh3_128 from both ends), then the table is re-pointed and the source kept."""
    # given
    settings.CATALOG_SPARK_MASTER = spark_standalone.master_url
    settings.CATALOG_SPARK_CONF = "spark.executor.memory=512m spark.cores.max=1"
    customers = table_row(metastore, "sales", "customers")
    source = path_of(customers.sd.location)
    target = warehouse / "sales.db" / "customers_on_cluster"

    # when
    call_command(
        "hive_ddl", f"ALTER TABLE sales.customers SET LOCATION '{location_of(target)}' WITH DATA",
        metastore=metastore.name, execute=True, reason="new volume", actor="ops", stdout=io.StringIO(),
    )  # fmt: skip

    # then
    job = Job.objects.get(kind=RELOCATE)
    assert (job.state, job.error) == (JobState.SUCCEEDED, "")
    assert job.spark_master == spark_standalone.master_url and job.spark_app_id.startswith("app-")
    planned = [f for unit in job.plan["units"] for f in unit["files"]]
    assert job.result["checksum"] == "xxh3_128" and job.result["files"] == len(planned) > 0
    assert job.files_done == job.files_total == len(planned)
    assert table_row(metastore, "sales", "customers").sd.location == location_of(target)
    comparison = filecmp.dircmp(source, target)
    assert not (comparison.diff_files or comparison.left_only or comparison.right_only) and any(source.iterdir())


def test_a_partition_relocates_through_spark_connect_and_swaps_once_verified(
    metastore: Metastore,
    people: dict[str, User],
    warehouse: Path,
    spark_connect: ConnectServer,
    settings,  # noqa: ANN001
    django_capture_on_commit_callbacks,  # noqa: ANN001
) -> None:
    """The relocate program over Spark Connect (``sc://``): its code shipped as artifacts, the server's executors copy
    and verify every file of the day's partitions, then the partitions are re-pointed; the job links the server's
    application and UI."""
    # given
    settings.CATALOG_SPARK_MASTER, settings.CATALOG_SPARK_MASTER_UI = spark_connect.url, spark_connect.ui
    target = warehouse / "sales.db" / "orders_over_connect"
    orders = table_row(metastore, "sales", "orders")
    moving = {n: loc for n, loc in partition_locations(metastore, orders.id).items() if n.startswith(DAY + "/")}
    sources = {n: path_of(loc) for n, loc in moving.items() if path_of(loc).is_dir()}

    # when
    request, job = executed(people, metastore, target, django_capture_on_commit_callbacks)

    # then
    job = Job.objects.get(pk=job.pk)
    request.refresh_from_db()
    assert (job.state, request.state) == (JobState.SUCCEEDED, "succeeded"), job.error
    assert job.spark_master == spark_connect.url and job.spark_app_id.startswith("local-")
    assert job.spark_ui_url == spark_connect.ui
    planned = [f for unit in job.plan["units"] for f in unit["files"]]
    assert job.result["files"] == job.files_done == len(planned) > 0
    now = partition_locations(metastore, orders.id)
    assert {n: now[n] for n in moving} == {n: location_of(target / n) for n in moving}
    for name, source in sources.items():
        comparison = filecmp.dircmp(source, target / name)
        assert not (comparison.diff_files or comparison.left_only or comparison.right_only), name
        assert any(source.iterdir())


def test_a_relocation_cancelled_while_its_driver_runs_swaps_nothing_and_removes_the_copy(
    metastore: Metastore, people: dict[str, User], warehouse: Path
) -> None:
    """A cancel request the runner finds once the driver is up: the driver is stopped, the partial copy removed, the
    metastore untouched, the source kept, and the request is approved again (nothing ran: issue 29)."""
    # given: queued (not run: no commit), resumed after a first attempt left a partial copy in the staging, and a
    # cancel request waiting for the runner
    target = warehouse / "sales.db" / "orders_moved"
    request, job = executed(people, metastore, target, lambda execute: nullcontext())
    Job.objects.filter(pk=job.pk).update(attempts=1)
    orders = table_row(metastore, "sales", "orders")
    before = partition_locations(metastore, orders.id)
    partial = target / job.plan["units"][0]["key"]
    partial.mkdir(parents=True)
    (partial / "part-00000").write_bytes(b"half")
    Job.objects.filter(pk=job.pk).update(cancel_requested_at=timezone.now(), cancel_requested_by="steward")

    # when
    ran = run_job(job.pk)

    # then
    request.refresh_from_db()
    assert (ran.state, request.state, request.execution) == (JobState.CANCELLED, "approved", None)
    assert ran.attempts == 2 and ran.driver_pid and not process_alive(ran.driver_pid), ran.error
    assert not target.exists()
    assert partition_locations(metastore, orders.id) == before
    assert not Execution.objects.exists()
    assert "before it changed anything: the request is approved again" in request.error


def test_kill_9_of_the_driver_mid_copy_leaves_source_and_metastore_and_resume_swaps_once_verified(
    metastore: Metastore, people: dict[str, User], warehouse: Path
) -> None:
    """The driver's process group killed after its first verified partition: the job fails with the partitions it
    verified, the metastore and the source are as before (nothing half-swapped), the request still executes; resumed,
    the run copies only the rest, then swaps every partition in one transaction."""
    # given: a queued relocation copying one partition per batch, pausing after each
    relocation = paused_relocation(people, metastore, warehouse, pause_seconds=3)
    request, job, units = relocation.request, relocation.job, relocation.units
    assert len(units) >= 2 and all(len(unit["files"]) == 1 for unit in job.plan["units"]), "one file per partition"
    killer = kill_driver_after_first_unit(DriverFiles(relocation.work / "attempt-1"))

    # when
    failed = run_job(job.pk)
    killer.join(timeout=60)

    # then: failed, resumable, nothing swapped, the source untouched
    request.refresh_from_db()
    assert failed.state == JobState.FAILED and failed.error.startswith("The Spark driver exited with -9"), failed.error
    assert 1 <= len(failed.completed) < len(units) and not process_alive(failed.driver_pid)
    assert request.state == "executing" and request.execution is None and not Execution.objects.exists()
    assert partition_locations(metastore, relocation.table_id) == relocation.before
    assert tree_digest(relocation.sources.values()) == relocation.source_bytes

    # when: resumed, and run as a worker would
    Job.objects.filter(pk=job.pk).update(plan={**job.plan, "pause_seconds": 0})
    job_resume(job=failed, user=make_user("operator", "admin"))
    finished = run_job(job.pk)

    # then
    request.refresh_from_db()
    assert (finished.state, finished.attempts, request.state) == (JobState.SUCCEEDED, 2, "succeeded"), finished.error
    assert finished.result["skipped"] == sorted(failed.completed)
    assert sorted(finished.result["units"]) == sorted(set(units) - set(failed.completed))
    relocation.swapped_every_partition_once_verified()


def test_a_relocation_handed_over_mid_copy_is_adopted_and_swaps_every_file_once_verified(
    metastore: Metastore, people: dict[str, User], warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25: the worker stops (SIGTERM) after the first verified partition. The driver is not stopped: the job is
    handed over with the metastore and source untouched; the worker that claims it next adopts the same driver (the
    same attempt), follows it to its manifest and swaps every partition, each copy identical to its source."""
    # given: a queued relocation copying one partition per batch, pausing after each, and a SIGTERM after the first
    monkeypatch.setattr(jobs, "_STOPPING", threading.Event())
    relocation = paused_relocation(people, metastore, warehouse, pause_seconds=2)
    request, job, units = relocation.request, relocation.job, relocation.units
    assert len(units) >= 2, "several partitions to copy"
    stopper = stop_worker_after_first_unit(DriverFiles(relocation.work / "attempt-1"))

    # when
    handed = run_job(job.pk)
    stopper.join(timeout=60)

    # then: handed over, the driver running on, nothing swapped
    request.refresh_from_db()
    assert (handed.state, handed.attempts, request.state) == (JobState.QUEUED, 1, "executing"), handed.error
    assert process_alive(handed.driver_pid) and handed.adoption is not None
    assert partition_locations(metastore, relocation.table_id) == relocation.before
    assert not Execution.objects.exists()

    # when: a worker that is not stopping claims it
    jobs._STOPPING.clear()
    finished = run_job(job.pk)

    # then
    request.refresh_from_db()
    assert (finished.state, finished.attempts, request.state) == (JobState.SUCCEEDED, 1, "succeeded"), finished.error
    assert finished.driver_pid == handed.driver_pid and finished.adoption is None
    assert finished.result["skipped"] == [] and sorted(finished.result["units"]) == sorted(units)
    relocation.swapped_every_partition_once_verified()
    assert Relocation.objects.get(execution=request.execution).state == Relocation.State.SWAPPED


def test_a_relocation_handed_over_and_claimed_on_another_host_is_followed_under_a_lease_and_swapped(
    metastore: Metastore, people: dict[str, User], warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25: a worker of another host claims the handed-over relocation. It cannot see the driver, so it follows
    it through the work location under a lease (the driver stops itself should that worker vanish) and never copies
    beside it: the same attempt and driver copy the rest, and every partition is swapped, each copy identical to its
    source."""
    # given: a relocation handed over after its first verified partition
    monkeypatch.setattr(jobs, "_STOPPING", threading.Event())
    relocation = paused_relocation(people, metastore, warehouse, pause_seconds=2)
    request, job, units, work = relocation.request, relocation.job, relocation.units, relocation.work
    stopper = stop_worker_after_first_unit(DriverFiles(work / "attempt-1"))
    handed = run_job(job.pk)
    stopper.join(timeout=60)
    assert handed.state == JobState.QUEUED and handed.adoption is not None, handed.error
    jobs._STOPPING.clear()

    # when: a worker of another host claims it
    with override_settings(CATALOG_WORKER_HOST="elsewhere.example", CATALOG_SPARK_LEASE_SECONDS=10):
        finished = run_job(job.pk)

    # then: followed to its end, in its first attempt, and swapped
    request.refresh_from_db()
    assert (finished.state, finished.attempts, request.state) == (JobState.SUCCEEDED, 1, "succeeded"), finished.error
    assert finished.driver_pid == handed.driver_pid and finished.adoption is None
    follower = json.loads((work / "attempt-1" / "follower").read_text())
    assert (follower["host"], follower["lease"]) == ("elsewhere.example", 10) and follower["beat"] >= 1
    assert not (work / "attempt-1" / "cancel").exists()
    assert sorted(finished.result["units"]) == sorted(units)
    relocation.swapped_every_partition_once_verified()


def test_a_relocation_settled_after_its_worker_died_resumes_and_copies_only_the_rest(
    metastore: Metastore, people: dict[str, User], warehouse: Path
) -> None:
    """Issue 25, case 8: the worker killed -9 mid-copy (its driver ended with it, one partition verified), then
    settled. Resume is not "nothing was run": the request is still executing, the new attempt skips the verified
    partition and swaps every one."""
    # given: the first attempt's driver killed after a verified unit, the job left running and silent as a worker
    # killed at that moment leaves it
    relocation = paused_relocation(people, metastore, warehouse, pause_seconds=2)
    request, job, units = relocation.request, relocation.job, relocation.units
    killer = kill_driver_after_first_unit(DriverFiles(relocation.work / "attempt-1"))
    run_job(job.pk)
    killer.join(timeout=60)
    long_ago = timezone.now() - timedelta(hours=1)
    Job.objects.filter(pk=job.pk).update(state=JobState.RUNNING, finished_at=None, error="", heartbeat_at=long_ago)
    [settled] = settle_stuck_jobs(older_than=0)
    errored = Job.objects.get(pk=job.pk)
    assert (settled.outcome, errored.state) == ("errored", JobState.ERRORED) and 1 <= len(errored.completed)

    # when
    Job.objects.filter(pk=job.pk).update(plan={**job.plan, "pause_seconds": 0})
    job_resume(job=errored, user=make_user("operator", "admin"))
    finished = run_job(job.pk)

    # then
    request.refresh_from_db()
    assert (finished.state, finished.attempts, request.state) == (JobState.SUCCEEDED, 2, "succeeded"), finished.error
    assert finished.result["skipped"] == sorted(errored.completed)
    assert sorted(finished.result["units"]) == sorted(set(units) - set(errored.completed))
    relocation.swapped_every_partition_once_verified()


def test_a_file_written_into_a_copied_partition_while_the_driver_runs_is_copied_before_the_swap(
    metastore: Metastore, people: dict[str, User], warehouse: Path
) -> None:
    """Issue 25, case 1: a writer without Hive's lock adds a file to a partition the driver already copied and
    verified. The job's swap re-lists the sources, copies that file (verified) to the new location, records it in
    the job's result and the relocation, says so in the job's log, and only then re-points the partitions."""
    # given: a queued relocation copying one partition per batch, pausing after each, and a writer that adds a file
    # to the first partition once the driver reported it verified
    relocation = paused_relocation(people, metastore, warehouse, pause_seconds=2)
    request, job, target = relocation.request, relocation.job, relocation.target
    first = job.plan["units"][0]
    late, content = path_of(first["source"]) / "000009_0", os.urandom(300_000)
    writer = write_after_first_unit(DriverFiles(relocation.work / "attempt-1"), late, content)

    # when
    finished = run_job(job.pk)
    writer.join(timeout=60)

    # then
    request.refresh_from_db()
    assert (finished.state, request.state) == (JobState.SUCCEEDED, "succeeded"), finished.error
    copied = target / first["key"] / late.name
    assert copied.read_bytes() == content
    assert [(f["source"], f["destination"], f["size"]) for f in finished.result["caught_up"][first["key"]]] == [
        (location_of(late), location_of(copied), len(content))
    ]
    relocation = Relocation.objects.get(execution=request.execution)
    assert relocation.files == sum(len(u["files"]) for u in job.plan["units"]) + 1
    assert "Re-listed before the swap: copied 1 file(s) written into 1 source(s) during the copy" in [
        entry.message for entry in finished.recent_log.lines
    ]
    assert partition_locations(metastore, table_row(metastore, "sales", "orders").id)[first["key"]] == location_of(
        target / first["key"]
    )


def write_after_first_unit(files: DriverFiles, path: Path, content: bytes) -> threading.Thread:
    """A thread that writes ``path`` once the driver's progress file reports a verified unit: a writer that takes
    no Hive lock, going on while the copy runs."""

    def watch() -> None:
        wait_for(lambda: files.progress.exists() and '"unit_done"' in files.progress.read_text(), "a verified unit")
        path.write_bytes(content)

    thread = threading.Thread(target=watch, daemon=True, name="a writer")
    thread.start()
    return thread


def tree_digest(roots) -> list[dict[str, str]]:  # noqa: ANN001
    return [
        {
            p.relative_to(root).as_posix(): hashlib.md5(p.read_bytes()).hexdigest()
            for p in root.rglob("*")
            if p.is_file()
        }
        for root in roots
    ]


def kill_driver_after_first_unit(files: DriverFiles) -> threading.Thread:
    """A thread that kill -9s the driver's process group (spark-submit's JVM and the Python driver) once its progress
    file reports a verified unit: what a crash of the driver's machine does."""

    def watch() -> None:
        wait_for(lambda: files.progress.exists() and '"unit_done"' in files.progress.read_text(), "a verified unit")
        os.killpg(wait_for(lambda: driver_group(files.directory), "the driver's process group"), signal.SIGKILL)

    thread = threading.Thread(target=watch, daemon=True, name="kill the driver")
    thread.start()
    return thread


def stop_worker_after_first_unit(files: DriverFiles) -> threading.Thread:
    """A thread that does what the worker's SIGTERM handler does (``jobs.request_stop``) once the driver's progress
    file reports a verified unit."""

    def watch() -> None:
        wait_for(lambda: files.progress.exists() and '"unit_done"' in files.progress.read_text(), "a verified unit")
        jobs.request_stop()

    thread = threading.Thread(target=watch, daemon=True, name="SIGTERM")
    thread.start()
    return thread


def driver_group(directory: Path) -> int | None:
    """The process group leader whose command line names the driver's directory (the driver runs in its own group)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
            if str(directory).encode() in arguments and os.getpgid(int(entry.name)) == int(entry.name):
                return int(entry.name)
        except OSError:
            continue
    return None
