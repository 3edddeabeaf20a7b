"""
Relocate on the quick tier's metastore, with real files: the preview's copy plan and blockers, the copy (the relocate
program in this process: the Spark path is proved in ``tests/witness/test_spark_relocate.py``), the swap, the kept
source, revert, resume and cleanup.
"""

from __future__ import annotations

import filecmp
import io
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import Partition, StorageDescriptor
from catalog_admin.selectors.metastores import Metastore
from operations.models import AuditRecord, Execution, Relocation
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.relocate import relocate_execute, relocation_copy_plan, relocations_cleanup
from operations.services.revert import revert_preview
from operations.spark.programs import relocate as relocate_program
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import event_types, location_of, path_of, row_changes

DAY = "dt=2024-01-02"


def in_process(events: list[dict] | None = None):  # noqa: ANN201 - a run_program
    """The relocate program run in this process (no Spark session), its reports kept in ``events``."""
    kept = events if events is not None else []
    return lambda plan: relocate_program.run(None, plan, kept.append)


def day_partitions(metastore: Metastore) -> dict[str, str]:
    orders = table_row(metastore, "sales", "orders")
    return {n: loc for n, loc in partition_locations(metastore, orders.id).items() if n.startswith(DAY + "/")}


def test_preview_of_a_partition_range_lists_every_file_and_repoints_by_name(
    metastore: Metastore, warehouse: Path
) -> None:
    """The partitions matching the spec, their files and bytes from a listing, one set-based SDS update."""
    # given
    moving = day_partitions(metastore)
    target = location_of(warehouse / "sales.db" / "orders_moved")
    files = [p for loc in moving.values() if path_of(loc).exists() for p in path_of(loc).rglob("*") if p.is_file()]

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{target}' WITH DATA",
    )

    # then
    assert preview.blockers == ()
    copy = preview.data_copy
    assert [u.key for u in copy.units] == sorted(moving)
    assert all(u.destination == f"{target}/{u.key}" for u in copy.units)
    assert (copy.files, copy.bytes, copy.is_sampled) == (len(files), sum(p.stat().st_size for p in files), False)
    assert row_changes(preview) == {"SDS": (0, len(moving), 0)}
    assert preview.scope.count == len(moving)
    assert {"engines_cache_locations", "source_retained"} <= {w.code for w in preview.warnings}
    assert preview.as_dict()["data_copy"]["units"] == len(moving)


@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ("ALTER TABLE sales.payments_acid SET LOCATION '{root}/p' WITH DATA", "transactional_rewrite"),
        ("ALTER TABLE marketing.campaign_performance SET LOCATION '{root}/v' WITH DATA", "view_location"),
        ("ALTER TABLE sales.customers SET LOCATION 'file:/tmp/not-governed/c' WITH DATA", "outside_roots"),
        ("ALTER TABLE sales.customers SET LOCATION '{root}/sales.db/orders' WITH DATA", "destination_exists"),
        ("ALTER TABLE sales.orders PARTITION (dt > '2030-01-01') SET LOCATION '{root}/x' WITH DATA", "nothing_matches"),
        ("ALTER TABLE sales.customers SET LOCATION 'gs://bucket/c' WITH DATA", "unreachable_filesystem"),
    ],
    ids=["transactional", "view", "outside-roots", "exists", "no-match", "no-client"],
)
def test_relocations_that_cannot_run_are_blocked_with_the_reason(
    metastore: Metastore, warehouse: Path, statement: str, code: str
) -> None:
    """Each blocker names what is wrong; nothing would be copied or re-pointed."""
    # given
    root = location_of(warehouse)

    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement.format(root=root))

    # then
    assert code in {b.code for b in preview.blockers}, preview.blockers
    assert preview.steps == ()


def test_relocation_copies_verifies_swaps_and_keeps_the_source(metastore: Metastore, warehouse: Path) -> None:
    """Every file is copied byte for byte, the partitions point at the copies, the source stays until cleanup."""
    # given
    moving = day_partitions(metastore)
    target = warehouse / "sales.db" / "orders_moved"
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{location_of(target)}' "
        "WITH DATA",
    )
    events: list[dict] = []

    # when
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process(events))

    # then
    orders = table_row(metastore, "sales", "orders")
    now = partition_locations(metastore, orders.id)
    assert {n: now[n] for n in moving} == {n: location_of(target / n) for n in moving}
    for name, old in moving.items():
        if path_of(old).exists():
            assert not filecmp.dircmp(path_of(old), target / name).diff_files
            assert sorted(p.name for p in path_of(old).rglob("*")) == sorted(p.name for p in (target / name).rglob("*"))
    assert [e["unit_done"] for e in events if "unit_done" in e] == sorted(moving)
    relocation = Relocation.objects.get(execution=execution)
    assert relocation.state == Relocation.State.SWAPPED and relocation.keep_until > timezone.now()
    assert all(path_of(old).exists() for old in moving.values() if path_of(old).exists())
    assert execution.state == Execution.State.SUCCEEDED


def test_revert_swaps_back_and_the_cleanup_then_removes_the_copy(metastore: Metastore, warehouse: Path) -> None:
    """While the source is kept a revert re-points the partitions at it; the unused copy goes at the next cleanup."""
    # given
    moving = day_partitions(metastore)
    orders = table_row(metastore, "sales", "orders")
    target = warehouse / "sales.db" / "orders_moved"
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{location_of(target)}' "
        "WITH DATA",
    )
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())

    # when
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    cleaned = relocations_cleanup()

    # then
    assert {n: loc for n, loc in partition_locations(metastore, orders.id).items() if n in moving} == moving
    assert [r.state for r in cleaned] == [Relocation.State.REVERTED]
    assert not any((target / name).exists() for name in moving)
    assert all(path_of(old).exists() for old in moving.values() if path_of(old).exists())


def test_cleanup_after_the_retention_removes_the_source_and_revert_is_then_refused(
    metastore: Metastore, warehouse: Path
) -> None:
    """Before its time the source stays; afterwards it is removed, audited, and a revert says why it cannot run."""
    # given
    customers = table_row(metastore, "sales", "customers")
    source = path_of(customers.sd.location)
    target = warehouse / "sales.db" / "customers_v2"
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{location_of(target)}' WITH DATA"
    )
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())

    # when
    early = relocations_cleanup()
    kept = source.exists()
    late = relocations_cleanup(now=timezone.now() + timedelta(days=365))

    # then
    assert early == [] and kept
    assert [r.state for r in late] == [Relocation.State.CLEANED]
    assert not source.exists() and any(target.iterdir())
    assert table_row(metastore, "sales", "customers").sd.location == location_of(target)
    assert AuditRecord.objects.filter(action="relocation_cleanup", execution_id_ref=execution.pk).count() == 1
    with pytest.raises(ApplicationError) as refused:
        revert_preview(execution=Execution.objects.get(pk=execution.pk))
    assert refused.value.code == ErrorCode.INVALID_STATE
    assert "source was removed" in refused.value.message


def test_a_resumed_copy_skips_the_units_already_verified(metastore: Metastore, warehouse: Path) -> None:
    """``completed`` units are not copied again; the swap still needs every unit done."""
    # given
    target = warehouse / "sales.db" / "orders_moved"
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{location_of(target)}' "
        "WITH DATA",
    )
    first, rest = preview.data_copy.units[0], preview.data_copy.units[1:]
    relocate_program.run(None, relocation_copy_plan(preview=preview), lambda event: None)
    (target / first.key).rename(target / "elsewhere")  # if the resumed run copied the first unit again, it would exist

    # when
    manifest = relocate_program.run(None, relocation_copy_plan(preview=preview, completed=[first.key]), [].append)

    # then
    assert manifest["skipped"] == [first.key]
    assert sorted(manifest["units"]) == sorted(u.key for u in rest)
    assert not (target / first.key).exists()


def test_an_incomplete_copy_swaps_nothing(metastore: Metastore, warehouse: Path) -> None:
    """A manifest missing a unit (a program that stopped early) is refused before the metastore is touched."""
    # given
    moving = day_partitions(metastore)
    target = warehouse / "sales.db" / "orders_moved"
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{location_of(target)}' "
        "WITH DATA",
    )

    def stops_early(plan: dict) -> dict:
        return relocate_program.run(None, {**plan, "units": plan["units"][:1]}, [].append)

    # when
    with pytest.raises(ApplicationError) as refused:
        relocate_execute(preview=preview, actor="steward", source="cli", run_program=stops_early)

    # then
    assert refused.value.code == ErrorCode.EXECUTION_FAILED
    assert day_partitions(metastore) == moving
    assert not Execution.objects.exists()


def test_a_relocation_never_runs_as_a_plain_alter(metastore: Metastore, warehouse: Path) -> None:
    """Re-pointing without the copy would lose the data: alter_execute refuses a plan with a data copy."""
    # given
    moving = day_partitions(metastore)
    target = location_of(warehouse / "sales.db" / "orders_moved")
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{target}' WITH DATA",
    )

    # when
    with pytest.raises(ApplicationError) as refused:
        alter_execute(preview=preview, actor="steward", source="cli")

    # then
    assert refused.value.code == ErrorCode.INVALID_STATE
    assert "relocation job" in refused.value.message
    assert day_partitions(metastore) == moving


def test_the_cleanup_command_reports_what_it_removed(metastore: Metastore, warehouse: Path) -> None:
    """``relocations_cleanup`` removes the copy of a reverted relocation and says so."""
    # given
    target = warehouse / "sales.db" / "customers_v2"
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{location_of(target)}' WITH DATA"
    )
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    out = io.StringIO()

    # when
    call_command("relocations_cleanup", stdout=out)

    # then
    assert out.getvalue() == f"Execution #{execution.pk}: removed the copy (1 unit(s)).\n"
    assert not target.exists()


def test_a_whole_partitioned_table_moves_with_each_partition_path_kept(metastore: Metastore, warehouse: Path) -> None:
    """The root and every partition below it are re-pointed by prefix in one statement; revert restores them all."""
    # given: every partition of sales.orders below its root (the seeded archive ones brought home)
    orders = table_row(metastore, "sales", "orders")
    root = orders.sd.location
    with allow_metastore_writes():
        for part in Partition.objects.using(metastore.alias).filter(table_id=orders.id).select_related("sd"):
            if not part.sd.location.startswith(root + "/"):
                StorageDescriptor.objects.using(metastore.alias).filter(id=part.sd_id).update(
                    location=f"{root}/{part.name}"
                )
    before = partition_locations(metastore, orders.id)
    target = location_of(warehouse / "moved" / "orders")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders SET LOCATION '{target}' WITH DATA"
    )
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())
    moved = partition_locations(metastore, orders.id)
    swap_events = event_types(metastore)
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")

    # then: the events Hive's own SET LOCATION of the table and of each partition would write, swap and swap back
    assert preview.blockers == ()
    assert dict(preview.events.counts) == {"ALTER_TABLE": 1, "ALTER_PARTITION": len(before)}
    assert swap_events == ["ALTER_TABLE"] + ["ALTER_PARTITION"] * len(before)
    assert event_types(metastore) == swap_events * 2
    assert row_changes(preview) == {"SDS": (0, 1 + len(before), 0)}
    assert preview.diff == [("location", root, target)]
    assert moved == {name: target + loc[len(root) :] for name, loc in before.items()}
    assert sorted(p.name for p in (warehouse / "moved" / "orders").rglob("*") if p.is_file())
    assert partition_locations(metastore, orders.id) == before
    assert table_row(metastore, "sales", "orders").sd.location == root


def test_partitions_outside_the_root_move_with_the_table_below_the_new_root(
    metastore: Metastore, warehouse: Path
) -> None:
    """Issue 29: the table's relocation was blocked at once by its partitions outside the root (the seeded archive
    ones), and the fix was one hand-written statement per partition. Now they move with it, by name, to
    ``<new root>/<partition name>`` (a warning names them), the others keep their path below the root; every file is
    copied, the swap writes the events of Hive's own SET LOCATION of each, and the revert puts every one back."""
    # given
    orders = table_row(metastore, "sales", "orders")
    root = orders.sd.location
    before = partition_locations(metastore, orders.id)
    outside = {name: loc for name, loc in before.items() if not loc.startswith(root + "/")}
    assert outside, "the seeded sales.orders keeps partitions under archive/"
    target = location_of(warehouse / "moved" / "orders")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders SET LOCATION '{target}' WITH DATA"
    )
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())
    moved = partition_locations(metastore, orders.id)
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")

    # then
    assert preview.blockers == ()
    warning = next(w for w in preview.warnings if w.code == "partitions_outside_root_moved")
    assert all(name in warning.message for name in outside) and f"{target}/<partition name>" in warning.message
    assert preview.scope.count == len(before) and dict(preview.events.counts)["ALTER_PARTITION"] == len(before)
    assert row_changes(preview) == {"SDS": (0, 1 + len(before), 0)}
    assert moved == {
        name: f"{target}/{name}" if name in outside else target + loc[len(root) :] for name, loc in before.items()
    }
    for name, old in outside.items():
        copied = sorted(p.name for p in path_of(f"{target}/{name}").rglob("*") if p.is_file())
        assert copied == sorted(p.name for p in path_of(old).rglob("*") if p.is_file())
    assert partition_locations(metastore, orders.id) == before
    assert table_row(metastore, "sales", "orders").sd.location == root


def test_relocating_a_table_to_its_own_root_moves_in_only_its_partitions_outside_it(
    metastore: Metastore, warehouse: Path
) -> None:
    """Issue 29, "re-point the outside": ``SET LOCATION '<its own root>' WITH DATA`` copies only the partitions outside
    the root, each to ``<root>/<partition name>``, re-points those (by name), leaves the table and every other
    partition as they are; the revert points them back at their kept directories."""
    # given
    orders = table_row(metastore, "sales", "orders")
    root = orders.sd.location
    before = partition_locations(metastore, orders.id)
    outside = {name: loc for name, loc in before.items() if not loc.startswith(root + "/")}
    assert outside, "the seeded sales.orders keeps partitions under archive/"

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders SET LOCATION '{root}' WITH DATA"
    )
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())
    moved = partition_locations(metastore, orders.id)
    root_after = table_row(metastore, "sales", "orders").sd.location
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")

    # then
    assert preview.blockers == ()
    assert [u.key for u in preview.data_copy.units] == sorted(outside)
    assert all(u.destination == f"{root}/{u.key}" for u in preview.data_copy.units)
    assert row_changes(preview) == {"SDS": (0, len(outside), 0)}
    assert preview.scope.count == len(outside) and dict(preview.events.counts) == {"ALTER_PARTITION": len(outside)}
    assert preview.diff == []
    warning = next(w for w in preview.warnings if w.code == "partitions_outside_root_moved")
    assert "nothing else moves" in warning.message
    assert "only_partition_data" not in {w.code for w in preview.warnings}
    assert root_after == root
    assert moved == {name: f"{root}/{name}" if name in outside else loc for name, loc in before.items()}
    for name, old in outside.items():
        copied = sorted(p.name for p in path_of(f"{root}/{name}").rglob("*") if p.is_file())
        assert copied == sorted(p.name for p in path_of(old).rglob("*") if p.is_file())
    assert partition_locations(metastore, orders.id) == before


def test_moving_in_is_refused_where_there_is_nothing_outside_or_its_new_directory_is_taken(
    metastore: Metastore, warehouse: Path
) -> None:
    """A table already wholly below its root, an unpartitioned table at its own root, and a partition whose new
    directory below the root already exists (its files would mix with what is there) are refused, naming why."""
    # given
    orders = table_row(metastore, "sales", "orders")
    root = orders.sd.location
    first_outside = sorted(
        n for n, loc in partition_locations(metastore, orders.id).items() if not loc.startswith(root + "/")
    )[0]
    taken = path_of(f"{root}/{first_outside}")
    taken.mkdir(parents=True)
    customers_root = table_row(metastore, "sales", "customers").sd.location
    clicks = table_row(metastore, "marketing", "clicks")
    with allow_metastore_writes():  # every partition of clicks below its root
        for part in Partition.objects.using(metastore.alias).filter(table_id=clicks.id).select_related("sd"):
            if not part.sd.location.startswith(clicks.sd.location + "/"):
                StorageDescriptor.objects.using(metastore.alias).filter(id=part.sd_id).update(
                    location=f"{clicks.sd.location}/{part.name}"
                )

    # when
    codes = {
        name: {b.code for b in alter_preview_statement(metastore=metastore, statement=statement).blockers}
        for name, statement in {
            "taken": f"ALTER TABLE sales.orders SET LOCATION '{root}' WITH DATA",
            "unpartitioned": f"ALTER TABLE sales.customers SET LOCATION '{customers_root}' WITH DATA",
            "nothing": f"ALTER TABLE marketing.clicks SET LOCATION '{clicks.sd.location}' WITH DATA",
        }.items()
    }

    # then
    assert codes == {
        "taken": {"destination_exists"},
        "unpartitioned": {"already_there"},
        "nothing": {"nothing_outside_root"},
    }


def test_a_symlink_appearing_after_the_preview_is_refused_by_the_copy_plan(
    metastore: Metastore, warehouse: Path, tmp_path: Path
) -> None:
    """Issue 25, case 4: the copy plan lists every unit now; a link found there refuses the job naming it."""
    # given
    target = warehouse / "sales.db" / "orders_moved"
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{location_of(target)}' "
        "WITH DATA",
    )
    (tmp_path / "passwd").write_text("root:x:0:0\n")
    link = path_of(preview.data_copy.units[-1].source) / "leak"
    link.symlink_to(tmp_path / "passwd")

    # when
    with pytest.raises(ApplicationError) as refused:
        relocation_copy_plan(preview=preview)

    # then
    assert refused.value.code == ErrorCode.SYMLINK_REFUSED
    assert location_of(link) in refused.value.message
    assert not target.exists()


def test_a_planned_file_swapped_for_a_symlink_is_not_copied_by_the_program(
    metastore: Metastore, warehouse: Path, tmp_path: Path
) -> None:
    """Issue 25, case 4: the program opens every file without following a link (O_NOFOLLOW), so a link swapped in
    after planning fails the copy and nothing of its target reaches the table's data."""
    # given
    target = warehouse / "sales.db" / "orders_moved"
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{location_of(target)}' "
        "WITH DATA",
    )
    plan = relocation_copy_plan(preview=preview)
    (tmp_path / "passwd").write_bytes(b"root:x:0:0\n")
    planned = path_of(plan["units"][0]["files"][0]["source"])
    planned.unlink()
    planned.symlink_to(tmp_path / "passwd")

    # when
    with pytest.raises(relocate_program.CopyFailed) as failed:
        relocate_program.run(None, plan, [].append)

    # then
    assert "a symbolic link is never followed" in str(failed.value)
    copied = [p.read_bytes() for p in target.rglob("*") if p.is_file()] if target.exists() else []
    assert b"root:x:0:0\n" not in copied


def test_the_cleanup_never_deletes_through_a_symlinked_parent(
    metastore: Metastore, warehouse: Path, tmp_path: Path
) -> None:
    """Issue 25, case 4: the relocated source's parent swapped for a link to outside data: the cleanup removes
    nothing there (it is retried later) and the outside files stay."""
    # given
    moving = day_partitions(metastore)
    target = warehouse / "sales.db" / "orders_moved"
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{location_of(target)}' "
        "WITH DATA",
    )
    relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())
    parent = path_of(next(iter(moving.values()))).parent
    outside = tmp_path / "outside"
    shutil.copytree(parent, outside)
    shutil.rmtree(parent)
    parent.symlink_to(outside)
    before = sorted(p.relative_to(outside) for p in outside.rglob("*"))

    # when
    cleaned = relocations_cleanup(now=timezone.now() + timedelta(days=365))

    # then
    [relocation] = cleaned
    assert relocation.state == Relocation.State.SWAPPED
    assert sorted(kept["key"] for kept in relocation.kept) == sorted(moving)
    assert before and sorted(p.relative_to(outside) for p in outside.rglob("*")) == before
    assert parent.is_symlink()
