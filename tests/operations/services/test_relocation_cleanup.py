"""
The relocation cleanup deletes nothing anything still needs (issue 25): it re-checks at delete time, in the metastore,
who uses each directory, which side the executions in force leave unused, and that the directory holds only the files
the job left there; a failed revert is no revert and can be retried; a swap that died right after its commit still
leaves a record the cleanup handles. Real files in the test's warehouse, the quick tier's PostgreSQL metastore.
"""

from __future__ import annotations

import io
import uuid
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.template.loader import render_to_string
from django.utils import timezone

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import filesystem_for
from catalog_admin.models import StorageDescriptor
from catalog_admin.selectors.metastores import Metastore, get_metastore
from operations.choices import JobState
from operations.models import AuditRecord, Execution, Job, Relocation
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.reconcile import reconcile_executions
from operations.services.relocate import relocate_execute, relocations_cleanup
from operations.services.revert import revert_preview
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.object_store import S3Server
from tests.fixtures.operations import ProcessDied, crash_at, location_of, path_of
from tests.operations.services.test_relocate import day_partitions, in_process

LATER = timedelta(days=365)  # past any retention time


def relocate_customers(metastore: Metastore, warehouse: Path) -> tuple[Execution, Path, Path]:
    """sales.customers relocated to ``customers_v2``: the swap's execution, the kept source and the copy."""
    source = path_of(table_row(metastore, "sales", "customers").sd.location)
    target = warehouse / "sales.db" / "customers_v2"
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{location_of(target)}' WITH DATA"
    )
    return relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process()), source, target


def revert_dies(execution: Execution, monkeypatch: pytest.MonkeyPatch, point: str = "before_commit") -> None:
    """Revert ``execution`` in a process that dies at ``point`` (before the commit: nothing is swapped back)."""
    preview = revert_preview(execution=execution)
    crash_at(monkeypatch, point)
    with pytest.raises(ProcessDied):
        alter_execute(preview=preview, actor="steward", source="cli")
    monkeypatch.undo()


def files_below(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


def test_a_revert_that_died_and_was_reconciled_failed_keeps_the_copy_and_can_be_retried(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A revert killed before its commit, then reconcile_executions (FAILED): the metastore still points at the copy,
    so the cleanup keeps it (saying why while the revert is unsettled); the revert runs again, and only then the copy
    goes."""
    # given
    execution, source, target = relocate_customers(metastore, warehouse)
    copied = files_below(target)
    revert_dies(execution, monkeypatch)

    # when
    while_running = relocations_cleanup()
    [settled] = reconcile_executions(older_than=0)
    after_failed = relocations_cleanup()
    kept_after_failed = files_below(target)
    retried = alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    after_retry = relocations_cleanup()

    # then
    assert settled.state == Execution.State.FAILED
    [running] = while_running
    assert running.state == Relocation.State.SWAPPED
    assert "has not settled" in running.kept[0]["reason"]
    assert after_failed == []  # a failed revert is no revert; the source's retention time has not passed
    assert kept_after_failed == copied
    assert retried.state == Execution.State.SUCCEEDED and retried.reverts_id == execution.pk
    assert [r.state for r in after_retry] == [Relocation.State.REVERTED]
    assert not target.exists() and source.is_dir()
    assert table_row(metastore, "sales", "customers").sd.location == location_of(source)


def test_the_source_a_partition_points_at_again_is_kept_and_reported(metastore: Metastore, warehouse: Path) -> None:
    """A partition pointed back at its kept source (the console's own SET LOCATION, or any Hive client): after the
    retention time the cleanup removes the other partitions' sources, keeps that one, names who uses it, audits it,
    and keeps it on the next run too."""
    # given
    moving = {name: old for name, old in day_partitions(metastore).items() if path_of(old).is_dir()}
    target = warehouse / "sales.db" / "orders_moved"
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{location_of(target)}' "
        "WITH DATA",
    )
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())
    back, back_source = sorted(moving.items())[0]
    hour = back.split("hour=")[1]
    alter_execute(
        preview=alter_preview_statement(
            metastore=metastore,
            statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour={hour}) SET LOCATION '{back_source}'",
        ),
        actor="steward",
        source="cli",
    )

    # when
    [first] = relocations_cleanup(now=timezone.now() + LATER)
    [second] = relocations_cleanup(now=timezone.now() + LATER)

    # then
    assert path_of(back_source).is_dir() and files_below(path_of(back_source))
    assert [path_of(old).exists() for name, old in moving.items() if name != back] == [False] * (len(moving) - 1)
    assert first.state == second.state == Relocation.State.SWAPPED
    assert [(k["key"], k["location"]) for k in second.kept] == [(back, back_source)]
    assert f"sales.orders/{back} uses" in second.kept[0]["reason"]
    audited = AuditRecord.objects.filter(action="relocation_cleanup", execution_id_ref=execution.pk)
    assert [a.outcome for a in audited] == ["kept"]  # once: the second run kept the same
    orders = table_row(metastore, "sales", "orders")
    assert partition_locations(metastore, orders.id)[back] == back_source


def test_files_written_at_the_source_after_the_copy_are_kept_and_reported(
    metastore: Metastore, warehouse: Path
) -> None:
    """A file written into the source after the job listed it (a writer that did not see the swap) keeps the source
    directory at the cleanup, named in what it kept."""
    # given
    execution, source, target = relocate_customers(metastore, warehouse)
    (source / "late-writer-000.txt").write_text("9|written after the copy\n")

    # when
    [relocation] = relocations_cleanup(now=timezone.now() + LATER)

    # then
    assert (source / "late-writer-000.txt").is_file()
    assert relocation.state == Relocation.State.SWAPPED
    assert relocation.kept == [
        {
            "key": "<table root>",
            "location": location_of(source),
            "reason": "1 file(s) written or changed after the job (first: late-writer-000.txt)",
        }
    ]


def test_a_revert_is_refused_naming_the_files_written_at_the_new_location(
    metastore: Metastore, warehouse: Path
) -> None:
    """Swapping back would leave files written at the new location since the swap behind (and the cleanup would
    then remove them with the copy): the revert preview blocks, naming them, and its risk is not low."""
    # given
    execution, source, target = relocate_customers(metastore, warehouse)
    (target / "inserted-after-swap.txt").write_text("10|written after the swap\n")

    # when
    preview = revert_preview(execution=execution)

    # then
    [blocker] = [b for b in preview.blockers if b.code == "written_after_swap"]
    assert f"{location_of(target)}/inserted-after-swap.txt" in blocker.message
    assert preview.risk == "high"
    assert "data_swapped_back" in {criterion.name for criterion in preview.criteria}


def test_after_a_revert_files_written_at_the_copy_since_are_kept(metastore: Metastore, warehouse: Path) -> None:
    """After a revert the cleanup removes the copy only if it holds nothing but what the job copied: a file written
    there since (a reader's cached location) is kept and reported."""
    # given
    execution, source, target = relocate_customers(metastore, warehouse)
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    (target / "cached-location-writer.txt").write_text("11|written at the old copy\n")

    # when
    [relocation] = relocations_cleanup()

    # then
    assert (target / "cached-location-writer.txt").is_file()
    assert relocation.state == Relocation.State.SWAPPED
    assert "cached-location-writer.txt" in relocation.kept[0]["reason"]


def test_a_swap_that_died_right_after_its_commit_leaves_a_relocation_the_cleanup_handles(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The relocation is recorded before the swap commits: a worker killed right after the commit leaves it pending;
    reconcile_executions settles it as swapped from the commit marker, and the cleanup removes the source after the
    retention time."""
    # given
    source = path_of(table_row(metastore, "sales", "customers").sd.location)
    target = warehouse / "sales.db" / "customers_v2"
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{location_of(target)}' WITH DATA"
    )
    crash_at(monkeypatch, "committed")
    with pytest.raises(ProcessDied):
        relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())
    monkeypatch.undo()
    pending = Relocation.objects.get().state

    # when
    [settled] = reconcile_executions(older_than=0)
    [cleaned] = relocations_cleanup(now=timezone.now() + LATER)

    # then
    assert pending == Relocation.State.PENDING
    assert settled.state == Execution.State.RECONCILED
    assert cleaned.state == Relocation.State.CLEANED
    assert not source.exists() and files_below(target)
    assert table_row(metastore, "sales", "customers").sd.location == location_of(target)


def test_a_swap_that_died_before_its_commit_leaves_the_source_and_its_copy_is_removed(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed before the commit, the swap never happened (reconciled FAILED): the cleanup removes the unused copy
    at once and never touches the source the table still uses."""
    # given
    source = path_of(table_row(metastore, "sales", "customers").sd.location)
    before = files_below(source)
    target = warehouse / "sales.db" / "customers_v2"
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{location_of(target)}' WITH DATA"
    )
    crash_at(monkeypatch, "before_commit")
    with pytest.raises(ProcessDied):
        relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())
    monkeypatch.undo()

    # when
    [settled] = reconcile_executions(older_than=0)
    [cleaned] = relocations_cleanup()

    # then
    assert settled.state == Execution.State.FAILED
    assert cleaned.state == Relocation.State.ABANDONED
    assert not target.exists() and files_below(source) == before
    assert table_row(metastore, "sales", "customers").sd.location == location_of(source)


def test_what_the_cleanup_kept_is_shown_on_the_job_and_printed_by_the_command(
    metastore: Metastore, warehouse: Path
) -> None:
    """The command prints what it kept and why, and the request's job panel lists each kept directory with the
    reason."""
    # given
    execution, source, target = relocate_customers(metastore, warehouse)
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    (target / "cached-location-writer.txt").write_text("11|written at the old copy\n")
    out = io.StringIO()

    # when
    call_command("relocations_cleanup", stdout=out)
    page = render_to_string(
        "operations/htmx/job_progress.html",
        {"job": Job(state=JobState.SUCCEEDED), "execution": Execution.objects.get(pk=execution.pk), "pv": {}},
    )

    # then
    reason = "1 file(s) written or changed after the job (first: cached-location-writer.txt)"
    assert out.getvalue() == (
        f"Execution #{execution.pk}: kept 1 unit(s) (first: {location_of(target)}: {reason}); the next run tries "
        "again.\n"
    )
    assert 'id="relocation-kept"' in page and location_of(target) in page and reason in page


def test_a_refused_swap_keeps_a_copy_the_metastore_points_at_meanwhile(metastore: Metastore, warehouse: Path) -> None:
    """A Hive client pointed the table at the new directory while the job copied: the swap is refused as stale, and
    the copy it would have removed stays, since the table now reads it."""
    # given
    customers = table_row(metastore, "sales", "customers")
    target = warehouse / "sales.db" / "customers_v2"
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{location_of(target)}' WITH DATA"
    )

    def copy_while_hive_repoints(plan: dict) -> dict:
        manifest = in_process()(plan)
        with allow_metastore_writes():
            StorageDescriptor.objects.using(metastore.alias).filter(id=customers.sd_id).update(
                location=location_of(target)
            )
        return manifest

    # when
    with pytest.raises(ApplicationError) as refused:
        relocate_execute(preview=preview, actor="steward", source="cli", run_program=copy_while_hive_repoints)

    # then
    assert refused.value.code == ErrorCode.STALE_PREVIEW
    assert files_below(target)
    relocation = Relocation.objects.get()
    assert relocation.state == Relocation.State.PENDING
    assert relocation.kept[0]["reason"] == f"sales.customers uses {location_of(target)}"


@pytest.mark.slow
def test_on_s3_objects_written_at_the_copy_after_a_revert_are_kept(
    metastore: Metastore, warehouse: Path, s3_filesystems: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table relocated to a bucket and reverted: five objects a writer put at the copy's prefix since (it still had
    the new location) keep the copy at the cleanup, all five still there; the revert preview said risk high."""
    # given: the bucket's lake/ folder is one of the metastore's governed roots
    lake = s3_filesystems.location("lake")
    configs = [replace(c, extra_roots=(*c.extra_roots, lake)) if c.name == metastore.name else c
               for c in settings.METASTORE_CONFIGS]  # fmt: skip
    monkeypatch.setattr(settings, "METASTORE_CONFIGS", configs)
    metastore = get_metastore(metastore.name)
    copy = f"{lake}/customers-{uuid.uuid4().hex[:8]}"
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{copy}' WITH DATA"
    )
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())
    revert = revert_preview(execution=execution)
    alter_execute(preview=revert, actor="steward", source="cli")
    bucket = filesystem_for(copy)
    for number in range(5):
        with bucket.open(f"{copy}/late-{number}.txt", "wb") as late:
            late.write(b"12|written after the revert\n")

    # when
    [relocation] = relocations_cleanup()

    # then
    assert revert.risk == "high"
    assert relocation.state == Relocation.State.SWAPPED
    assert relocation.kept[0]["reason"].startswith("5 file(s) written or changed after the job")
    assert sorted(f.relative for f in bucket.list_files(copy) if f.relative.startswith("late-")) == [
        f"late-{n}.txt" for n in range(5)
    ]
