"""
A ``DROP PARTITION`` moves a folder of the table's layout whole (``dt=2024-01-02/`` with its four hourly partitions)
when the disk and the metastore prove it holds only what is dropped (``planners/partitions/trash.py``); execution
lists it again first, and a revert brings every partition back. Anything else in or under the folder keeps the
partitions moving one by one, as before.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import Partition
from catalog_admin.selectors.locations import strangers_inside
from catalog_admin.selectors.metastores import Metastore
from operations.preview import DirectoryMove, Preview
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.folder_moves import put_back_unplanned, refuse_changed_folders
from operations.services.revert import revert_preview
from tests.fixtures.factories import table_row
from tests.fixtures.operations import execute, path_of
from tests.operations.test_containment_range_drop import customers_sd, repoint

DAY = "dt=2024-01-02"
DROP_DAY = "ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-02')"
HOURS = ("hour=0", "hour=3", "hour=6", "hour=9")

on_two = pytest.mark.parametrize("metastore_alias", ["hive31_pg", "hive31_my"], indirect=True)


def day_folder(metastore: Metastore) -> Path:
    return path_of(table_row(metastore, "sales", "orders").sd.location) / DAY


def day_partitions(metastore: Metastore) -> dict[str, str]:
    rows = Partition.objects.using(metastore.alias).filter(table__name="orders", name__startswith=f"{DAY}/")
    return dict(rows.values_list("name", "sd__location"))


def preview_day(metastore: Metastore) -> Preview:
    return alter_preview_statement(metastore=metastore, statement=DROP_DAY)


@on_two
def test_a_day_whose_every_partition_is_dropped_moves_whole_and_comes_back_on_revert(
    metastore: Metastore, warehouse: Path
) -> None:
    """One move for the day's four partitions, to where each would have gone alone; a revert puts them back."""
    # given
    folder = day_folder(metastore)
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))

    # when
    preview = preview_day(metastore)
    execution = execute(preview)

    # then
    (move,) = preview.moves
    assert path_of(move.source) == folder and move.entries == HOURS and move.partitions_moving == 4
    assert not preview.blockers
    assert not folder.exists()
    assert preview.affected is not None
    for partition in preview.affected.listed:
        assert partition.fate == f"to the trash: {move.destination}/{partition.name.split('/')[1]}"
        assert path_of(move.destination).joinpath(partition.name.split("/")[1]).is_dir()

    # when
    alter_execute(preview=revert_preview(execution=execution), actor="tester", source="cli")

    # then
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == files
    assert set(day_partitions(metastore)) == {f"{DAY}/{hour}" for hour in HOURS}


@on_two
@pytest.mark.parametrize(
    "extra",
    ["file", "directory", "link"],
)
def test_anything_else_in_the_day_keeps_its_partitions_moving_alone(
    metastore: Metastore, warehouse: Path, tmp_path: Path, extra: str
) -> None:
    """A file, a directory no dropped partition owns, or a link beside the hours: each partition moves alone, and
    what was beside them stays where it is."""
    # given
    folder = day_folder(metastore)
    beside = folder / "_SUCCESS"
    if extra == "file":
        beside.write_text("")
    elif extra == "directory":
        beside.mkdir()
    else:
        beside.symlink_to(tmp_path)

    # when
    preview = preview_day(metastore)
    execute(preview)

    # then
    assert sorted(path_of(m.source).name for m in preview.moves) == list(HOURS)
    assert not any(m.entries for m in preview.moves)
    assert os.path.lexists(beside)


@on_two
def test_a_link_in_place_of_an_hour_is_never_moved_inside_its_day(
    metastore: Metastore, warehouse: Path, tmp_path: Path
) -> None:
    """An hour's directory replaced by a link: the day does not move whole (which would carry the link along
    unchecked); the link blocks the drop, naming it, as for a partition on its own."""
    # given
    hour = day_folder(metastore) / "hour=9"
    for child in hour.iterdir():
        child.unlink()
    hour.rmdir()
    hour.symlink_to(tmp_path)

    # when
    preview = preview_day(metastore)

    # then
    assert not any(m.entries for m in preview.moves)
    assert [b.code for b in preview.blockers] == ["symlink_in_path"]
    assert str(hour) in preview.blockers[0].message


@on_two
def test_a_kept_partition_named_under_the_day_keeps_it_in_place(metastore: Metastore, warehouse: Path) -> None:
    """The range keeps hour=9, whose directory is missing: the day's listing holds only dropped hours, but the
    metastore still has a partition under it, so each dropped hour moves alone and nothing blocks."""
    # given
    hour = day_folder(metastore) / "hour=9"
    for child in hour.iterdir():
        child.unlink()
    hour.rmdir()

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-02', hour < 9)"
    )

    # then
    assert not preview.blockers
    assert sorted(path_of(m.source).name for m in preview.moves) == ["hour=0", "hour=3", "hour=6"]


@on_two
def test_another_tables_location_inside_the_day_keeps_it_in_place(metastore: Metastore, warehouse: Path) -> None:
    """sales.customers points at ``dt=2024-01-02/hour=4`` (no directory on disk): the day does not move whole,
    which would carry that location along; the hours move alone and nothing blocks."""
    # given
    location = f"{table_row(metastore, 'sales', 'orders').sd.location.rstrip('/')}/{DAY}/hour=4"
    repoint(metastore, customers_sd(metastore), location)

    # when
    preview = preview_day(metastore)

    # then
    orders = table_row(metastore, "sales", "orders")
    root, day = orders.sd.location, location.rsplit("/", 1)[0]
    assert strangers_inside(metastore, orders.id, root, day, day) == [location]
    assert strangers_inside(metastore, orders.id, root, f"{root}/dt=2024-01-03", f"{root}/dt=2024-01-03") == []
    assert not preview.blockers
    assert sorted(path_of(m.source).name for m in preview.moves) == list(HOURS)


@on_two
def test_a_directory_written_into_the_day_after_the_preview_refuses_the_execution(
    metastore: Metastore, warehouse: Path
) -> None:
    """hour=12 appears after the preview: the execution refuses, naming it, before anything moves or is written."""
    # given
    preview = preview_day(metastore)
    (day_folder(metastore) / "hour=12").mkdir()

    # when
    with pytest.raises(ApplicationError) as refused:
        execute(preview)

    # then
    assert refused.value.code == ErrorCode.STALE_PREVIEW
    assert "hour=12" in refused.value.message and str(day_folder(metastore)) in refused.value.message
    assert all(path_of(location).is_dir() for location in day_partitions(metastore).values())
    assert len(day_partitions(metastore)) == 4


@on_two
def test_a_planned_hour_gone_after_the_preview_refuses_the_execution(metastore: Metastore, warehouse: Path) -> None:
    """A planned hour's directory removed after the preview: refused, naming it."""
    # given
    preview = preview_day(metastore)
    hour = day_folder(metastore) / "hour=3"
    for child in hour.iterdir():
        child.unlink()
    hour.rmdir()

    # when
    with pytest.raises(ApplicationError) as refused:
        refuse_changed_folders(preview.moves)

    # then
    assert refused.value.code == ErrorCode.STALE_PREVIEW
    assert "1 planned partition directory gone: hour=3" in refused.value.message


def test_an_entry_that_slipped_in_during_the_move_is_put_back(tmp_path: Path) -> None:
    """Written between the listing and the move, an entry went to the trash with its folder: it is moved back to
    where it was written, the planned ones stay in the trash."""
    # given
    source, destination = tmp_path / "table" / DAY, tmp_path / "trash" / DAY
    for name in ("hour=0", "hour=1", "late"):
        (destination / name).mkdir(parents=True)
    (destination / "late" / "part-0").write_text("written meanwhile")
    move = DirectoryMove(
        f"file:{source}", f"file:{destination}", 2, 0, 0, 0, True, True, True, entries=("hour=0", "hour=1")
    )

    # when
    put_back = put_back_unplanned(move, "hive31_pg")

    # then
    assert put_back == ["late"]
    assert (source / "late" / "part-0").read_text() == "written meanwhile"
    assert sorted(p.name for p in destination.iterdir()) == ["hour=0", "hour=1"]


@on_two
def test_the_preview_page_and_hive_ddl_say_the_day_moves_whole(
    metastore: Metastore, warehouse: Path, people: dict
) -> None:
    """A steward reads it on the live preview (a "whole folder" check beside the move) and an operator in
    ``hive_ddl``'s text; nothing is written by either."""
    # given
    client = Client()
    client.force_login(people["steward"])
    out = io.StringIO()

    # when
    response = client.post(
        reverse("operations:preview"), {"metastore": metastore.name, "statement": DROP_DAY}, HTTP_HX_REQUEST="true"
    )
    call_command("hive_ddl", DROP_DAY, "--metastore", metastore.name, stdout=out)

    # then
    assert response.status_code == 200
    assert ">whole folder</span>" in response.content.decode()
    assert "a whole folder of 4 directories, listed again before it moves)" in out.getvalue()
    assert day_folder(metastore).is_dir()
