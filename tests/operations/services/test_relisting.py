"""
Re-listing before a data job's swap (issue 25, case 1: a write during a relocation was lost), on the quick tier's
metastore with real files: a writer adds, grows or replaces files in a partition after the program listed it and
before the swap, during a relocation and during a CONCATENATE. The programs run in this process; the same on Spark,
with the rows counted through Spark's Hive client, is in ``tests/witness/test_spark_relocate.py`` and
``test_spark_rewrite.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import FileEntry
from catalog_admin.seeding.files import encode_rows
from catalog_admin.selectors.metastores import Metastore
from operations.models import Execution, Relocation
from operations.preview import Preview
from operations.services.alter import alter_preview_statement
from operations.services.relisting import CATCH_UP_ROUNDS, catch_up_relocation, compare_listing
from operations.services.relocate import relocate_execute, relocation_copy_plan, relocations_cleanup
from operations.spark.programs import relocate as relocate_program
from operations.spark.programs import rewrite as rewrite_program
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import location_of, path_of
from tests.operations.services.test_rewrite import ORDERS, split_into_small_files

pytestmark = pytest.mark.usefixtures("warehouse")  # every test writes files: the warehouse is restored afterwards

DAY = "dt=2024-01-02"
LATE_ROWS = 20_000


def late_rows(first: int = 700_000) -> bytes:
    """A Parquet file of :data:`LATE_ROWS` orders, as a writer without Hive's lock would add it."""
    return encode_rows("parquet", ORDERS, [(first + i, i % 97, i / 4, "late") for i in range(LATE_ROWS)])


def parquet_rows(directory: Path) -> int:
    return sum(pq.read_metadata(p).num_rows for p in directory.rglob("*") if p.is_file() and p.name[0] not in "._")


def relocation_of_the_day(metastore: Metastore, warehouse: Path) -> tuple[Preview, Path]:
    target = warehouse / "sales.db" / "orders_moved"
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{location_of(target)}' "
        "WITH DATA",
    )
    assert preview.blockers == (), preview.blockers
    return preview, target


def copy_then(write: Callable[[], None], program=relocate_program, manifests: list | None = None):  # noqa: ANN001, ANN201 - a run_program
    """The program run in this process, then ``write``: a writer that went on while the copy ran. The manifests
    it returned are kept in ``manifests``."""

    def run(plan: dict) -> dict:
        manifest = program.run(None, plan, [].append)
        write()
        (manifests if manifests is not None else []).append(manifest)
        return manifest

    return run


def test_the_comparison_is_one_sweep_over_both_lists_sorted_by_location() -> None:
    """Whatever order the plan and the listing come in: new locations are added, a planned one of another size is
    changed, a planned one not listed is removed, equal ones are nothing."""
    # given
    planned = [
        {"source": "file:/t/b", "size": 2},
        {"source": "file:/t/a", "size": 1},
        {"source": "file:/t/d", "size": 4},
    ]
    listed = [FileEntry("file:/t/c", "c", 3), FileEntry("file:/t/b", "b", 20), FileEntry("file:/t/a", "a", 1)]

    # when
    drift = compare_listing("u", planned, listed)

    # then
    assert (drift.added, drift.changed, drift.removed) == (
        (FileEntry("file:/t/c", "c", 3),),
        ("file:/t/b",),
        ("file:/t/d",),
    )
    same = [FileEntry(f["source"], f["source"][-1], f["size"]) for f in reversed(planned)]
    assert compare_listing("u", planned, same).is_empty


def test_rows_written_into_a_partition_during_a_relocation_are_copied_before_the_swap_and_outlive_the_cleanup(
    metastore: Metastore, warehouse: Path
) -> None:
    """A file a writer added to a partition after the copy listed it is copied in a verified catch-up pass before the
    swap: the new location holds its rows, the relocation records it, and once the cleanup removed the source the
    rows are still read from the new location."""
    # given
    preview, target = relocation_of_the_day(metastore, warehouse)
    unit = preview.data_copy.units[0]
    source = path_of(unit.source)
    rows_before = parquet_rows(source)
    planned = relocation_copy_plan(preview=preview)
    late = late_rows()
    manifests: list[dict] = []

    # when
    execution = relocate_execute(
        preview=preview, actor="steward", source="cli",
        run_program=copy_then(lambda: (source / "000009_0").write_bytes(late), manifests=manifests),
    )  # fmt: skip
    relocations_cleanup(now=timezone.now() + timedelta(days=365))

    # then
    copied = target / unit.key / "000009_0"
    assert copied.read_bytes() == late
    caught_up = manifests[0]["caught_up"]
    assert {key: [(f["source"], f["size"]) for f in files] for key, files in caught_up.items()} == {
        unit.key: [(location_of(source / "000009_0"), len(late))]
    }
    assert parquet_rows(target / unit.key) == rows_before + LATE_ROWS
    relocation = Relocation.objects.get(execution=execution)
    assert relocation.files == sum(len(u["files"]) for u in planned["units"]) + 1
    assert relocation.bytes == sum(f["size"] for u in planned["units"] for f in u["files"]) + len(late)
    assert relocation.state == Relocation.State.CLEANED and not source.exists()
    assert partition_locations(metastore, table_row(metastore, "sales", "orders").id)[unit.key] == location_of(
        target / unit.key
    )


@pytest.mark.parametrize("how", ["grown", "replaced"])
def test_a_file_changed_or_replaced_during_a_relocation_refuses_the_swap_naming_it(
    metastore: Metastore, warehouse: Path, how: str
) -> None:
    """A planned file whose size changed, or that a writer removed (an INSERT OVERWRITE from an engine without Hive's
    lock), refuses the swap naming it: the copy holds its earlier content. The metastore and the source are as
    the writer left them."""
    # given
    preview, _target = relocation_of_the_day(metastore, warehouse)
    before = partition_locations(metastore, table_row(metastore, "sales", "orders").id)
    source = path_of(preview.data_copy.units[0].source)
    planned = sorted(p for p in source.rglob("*") if p.is_file())[0]
    late = late_rows()

    def write() -> None:
        if how == "replaced":
            planned.unlink()
            (source / "part-00000-overwrite").write_bytes(late)
        else:
            planned.write_bytes(planned.read_bytes() + late)

    # when
    with pytest.raises(ApplicationError) as refused:
        relocate_execute(preview=preview, actor="steward", source="cli", run_program=copy_then(write))

    # then
    assert refused.value.code == ErrorCode.EXECUTION_FAILED
    assert location_of(planned) in refused.value.message and "nothing was swapped" in refused.value.message
    expected = {"grown": ("changed", [location_of(planned)]), "replaced": ("removed", [location_of(planned)])}[how]
    assert refused.value.details[expected[0]] == expected[1]
    assert partition_locations(metastore, table_row(metastore, "sales", "orders").id) == before
    assert not Execution.objects.exists() and not Relocation.objects.exists()
    assert planned.read_bytes().endswith(late) if how == "grown" else (source / "part-00000-overwrite").exists()


def test_a_source_still_growing_after_the_catch_up_rounds_is_refused_naming_what_appeared(
    metastore: Metastore, warehouse: Path
) -> None:
    """Each listing finds one more file: each is copied (verified) into the plan, and after the last round the swap
    is refused naming the file that appeared since, rather than chasing the writer for ever."""
    # given
    preview, target = relocation_of_the_day(metastore, warehouse)
    plan = relocation_copy_plan(preview=preview)
    relocate_program.run(None, plan, [].append)
    source = path_of(plan["units"][0]["source"])
    written: list[Path] = []

    def writer() -> None:
        written.append(source / f"00010{len(written)}_0")
        written[-1].write_bytes(late_rows(800_000 + 100_000 * len(written)))

    # when
    with pytest.raises(ApplicationError) as refused:
        catch_up_relocation(plan, between_rounds=writer)

    # then
    assert len(written) == CATCH_UP_ROUNDS + 1
    assert refused.value.details["appeared"] == [location_of(written[-1])]
    assert f"through {CATCH_UP_ROUNDS} catch-up copies" in refused.value.message
    key = plan["units"][0]["key"]
    assert [(target / key / p.name).read_bytes() == p.read_bytes() for p in written[:-1]] == [True] * CATCH_UP_ROUNDS
    assert not (target / key / written[-1].name).exists()


def test_rows_written_into_a_partition_during_a_concatenate_refuse_the_swap_naming_the_file(
    metastore: Metastore,
) -> None:
    """A CONCATENATE's output holds the rows of the files it read: a file that appeared in a partition after its
    listing refuses the swap, naming it; the partitions still point at their directories, which hold every row."""
    # given
    chosen = split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    orders = table_row(metastore, "sales", "orders")
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE"
    )
    assert preview.blockers == (), preview.blockers
    before = partition_locations(metastore, orders.id)
    source = path_of(chosen[preview.data_copy.units[0].key])
    rows_before = parquet_rows(source)
    late = source / "000009_0"

    # when
    with pytest.raises(ApplicationError) as refused:
        relocate_execute(
            preview=preview, actor="steward", source="cli",
            run_program=copy_then(lambda: late.write_bytes(late_rows()), program=rewrite_program),
        )  # fmt: skip

    # then
    assert refused.value.code == ErrorCode.EXECUTION_FAILED
    assert refused.value.details["appeared"] == [location_of(late)]
    assert location_of(late) in refused.value.message
    assert partition_locations(metastore, orders.id) == before
    assert parquet_rows(source) == rows_before + LATE_ROWS
    assert not Execution.objects.exists()
