"""
The local filesystem never follows a symbolic link, at any level of a path: listings report links instead of
their targets, and reading, writing, copying, renaming and deleting through one are refused (issue 25, case 4).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from catalog_admin import locations
from catalog_admin.locations import FileEntry, LocalFileSystem, SymlinkRefused, TreeSize, local_tree_sizes


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside any table, holding a secret the console must never read, copy or delete."""
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "secret").write_bytes(b"SECRET_KEY=x")
    return directory


@pytest.fixture
def table(tmp_path: Path) -> Path:
    directory = tmp_path / "wh" / "t"
    (directory / "dt=1").mkdir(parents=True)
    (directory / "dt=1" / "a").write_bytes(b"hello")
    return directory


def test_a_listing_flags_links_to_files_and_directories_instead_of_reading_their_targets(
    table: Path, outside: Path
) -> None:
    """A link to a file and a link to a directory are listed as links (their own size), never descended into."""
    # given
    (table / "dt=1" / "leak").symlink_to(outside / "secret")
    (table / "dt=2").symlink_to(outside)
    root = f"file:{table}"

    # when
    listed = LocalFileSystem().list_files(root)

    # then
    assert listed is not None
    assert sorted((e.relative, e.symlink) for e in listed) == [("dt=1/a", False), ("dt=1/leak", True), ("dt=2", True)]
    assert all(not e.relative.startswith("dt=2/") for e in listed)


def test_a_listing_of_a_location_behind_a_linked_parent_is_one_flagged_entry(tmp_path: Path, outside: Path) -> None:
    """A table directory reached through a linked parent lists nothing of the target: the link is reported."""
    # given
    (tmp_path / "wh").mkdir()
    (tmp_path / "wh" / "db").symlink_to(outside)

    # when
    listed = LocalFileSystem().list_files(f"file:{tmp_path}/wh/db")
    nested = LocalFileSystem().list_files(f"file:{tmp_path}/wh/db/t")

    # then
    assert listed == [FileEntry(f"file:{tmp_path}/wh/db", "", 0, symlink=True)]
    assert nested == [FileEntry(f"file:{tmp_path}/wh/db", "", 0, symlink=True)]


def test_reading_copying_and_digesting_through_a_link_are_refused(table: Path, outside: Path) -> None:
    """A link as the file itself or as a parent directory: open, copy_file and digest raise, nothing is copied."""
    # given
    (table / "dt=1" / "leak").symlink_to(outside / "secret")
    (table / "dt=2").symlink_to(outside)
    filesystem = LocalFileSystem()

    # when / then
    for location in (f"file:{table}/dt=1/leak", f"file:{table}/dt=2/secret"):
        with pytest.raises(SymlinkRefused):
            filesystem.open(location).close()
        with pytest.raises(SymlinkRefused):
            filesystem.digest(location)
        with pytest.raises(SymlinkRefused):
            filesystem.copy_file(location, f"file:{table}/copy/secret")
    assert not (table / "copy" / "secret").exists()


def test_writing_through_a_linked_directory_is_refused(table: Path, outside: Path) -> None:
    """A copy's destination behind a link is never created: the outside directory is left as it was."""
    # given
    (table / "dt=2").symlink_to(outside)
    filesystem = LocalFileSystem()

    # when
    with pytest.raises(SymlinkRefused):
        filesystem.copy_file(f"file:{table}/dt=1/a", f"file:{table}/dt=2/x/a")
    with pytest.raises(SymlinkRefused):
        filesystem.open(f"file:{table}/dt=2/secret", "wb").close()

    # then
    assert sorted(os.listdir(outside)) == ["secret"]
    assert (outside / "secret").read_bytes() == b"SECRET_KEY=x"


def test_delete_tree_through_a_linked_parent_deletes_nothing_outside(tmp_path: Path, outside: Path) -> None:
    """``rmtree`` of wh/db/t where wh/db links outside: refused, the outside files stay."""
    # given
    (outside / "t").mkdir()
    (outside / "t" / "data").write_bytes(b"keep")
    (tmp_path / "wh").mkdir()
    (tmp_path / "wh" / "db").symlink_to(outside)

    # when
    with pytest.raises(SymlinkRefused):
        LocalFileSystem().delete_tree(f"file:{tmp_path}/wh/db/t")

    # then
    assert (outside / "t" / "data").read_bytes() == b"keep"


def test_delete_tree_removes_links_inside_without_following_them(table: Path, outside: Path) -> None:
    """Links below the deleted directory are removed as links; their targets stay."""
    # given
    (table / "dt=1" / "leak").symlink_to(outside / "secret")
    (table / "dt=2").symlink_to(outside)

    # when
    LocalFileSystem().delete_tree(f"file:{table}")

    # then
    assert not table.exists()
    assert (outside / "secret").read_bytes() == b"SECRET_KEY=x"


def test_a_linked_location_itself_is_neither_deleted_nor_renamed(table: Path, outside: Path) -> None:
    """delete_tree and rename of a location that is a link refuse: neither the link nor its target changes."""
    # given
    (table / "dt=2").symlink_to(outside)
    filesystem = LocalFileSystem()

    # when
    with pytest.raises(SymlinkRefused):
        filesystem.delete_tree(f"file:{table}/dt=2")
    with pytest.raises(SymlinkRefused):
        filesystem.rename(f"file:{table}/dt=2", f"file:{table}/dt=3")
    with pytest.raises(SymlinkRefused):
        filesystem.rename(f"file:{table}/dt=1", f"file:{table}/dt=2/moved")

    # then
    assert (table / "dt=2").is_symlink()
    assert sorted(os.listdir(outside)) == ["secret"]
    assert (table / "dt=1" / "a").exists()


def test_directory_listings_and_quick_stats_do_not_follow_links(table: Path, outside: Path) -> None:
    """The ACID listing and the quick statistics count a link as what it is, never its target's files."""
    # given
    (table / "dt=1" / "leak").symlink_to(outside / "secret")
    (table / "dt=2").symlink_to(outside)
    filesystem = LocalFileSystem()

    # when
    children = filesystem.list_directory(f"file:{table}")
    stats = filesystem.quick_stats(f"file:{table}")

    # then
    assert children is not None
    by_name = {c.name: c for c in children}
    assert by_name["dt=2"].is_dir is False
    assert by_name["dt=1"].files == ("a", "leak")
    assert by_name["dt=1"].size == 5 + len(str(outside / "secret"))
    assert stats.files == 3
    assert stats.bytes == 5 + len(str(outside / "secret")) + len(str(outside))


def test_sizes_in_one_descent_report_a_parent_link_as_the_link_never_its_target(table: Path, outside: Path) -> None:
    """Locations below a directory swapped for a link (its data moved outside) each count as one link of no bytes,
    whether or not the target has them; the siblings beside the link are counted in full."""
    # given
    for hour in (0, 1):
        (table / "dt=2" / f"hour={hour}").mkdir(parents=True)
        (table / "dt=2" / f"hour={hour}" / "a").write_bytes(b"kept")
        (outside / "moved" / f"hour={hour}").mkdir(parents=True)
        (outside / "moved" / f"hour={hour}" / "big").write_bytes(b"x" * 1000)
    (table / "dt=3").symlink_to(outside / "moved")
    wanted = [f"file:{table}/dt={day}/hour={hour}" for day in (2, 3) for hour in (0, 1, 7)]

    # when
    sizes = local_tree_sizes(wanted)

    # then
    assert sizes == {
        f"file:{table}/dt=2/hour=0": TreeSize(files=1, bytes=4),
        f"file:{table}/dt=2/hour=1": TreeSize(files=1, bytes=4),
        f"file:{table}/dt=3/hour=0": TreeSize(files=1, bytes=0),
        f"file:{table}/dt=3/hour=1": TreeSize(files=1, bytes=0),
        f"file:{table}/dt=3/hour=7": TreeSize(files=1, bytes=0),  # the link is reported, its target never asked
    }


def test_a_link_swapped_in_during_the_descent_is_never_passed_through(
    table: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory replaced by a link to the outside after its first location was counted: the later locations
    below it are read through the descriptor already verified (the moved directory's own files) or reported as the
    link, never from the link's target."""
    # given
    day = table / "dt=2"
    for hour in (0, 1):
        (day / f"hour={hour}").mkdir(parents=True)
        (day / f"hour={hour}" / "a").write_bytes(b"kept")
        (outside / f"hour={hour}").mkdir()
        (outside / f"hour={hour}" / "big").write_bytes(b"x" * 1000)
    counted = locations._count
    swapped: list[Path] = []

    def count_then_swap(fd: int, path: str) -> tuple[int, int]:
        result = counted(fd, path)
        if not swapped:
            day.rename(table / "dt=2-real")
            day.symlink_to(outside)
            swapped.append(day)
        return result

    monkeypatch.setattr(locations, "_count", count_then_swap)

    # when
    sizes = local_tree_sizes([f"file:{day}/hour=0", f"file:{day}/hour=1"])
    again = local_tree_sizes([f"file:{day}/hour=1"])

    # then
    assert swapped == [day]
    assert sizes[f"file:{day}/hour=0"] == TreeSize(files=1, bytes=4)
    assert sizes[f"file:{day}/hour=1"] in (TreeSize(files=1, bytes=4), TreeSize(files=1, bytes=0))
    assert again == {f"file:{day}/hour=1": TreeSize(files=1, bytes=0)}


def test_sizes_in_one_descent_open_each_directory_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many locations below one table are counted with every directory on the way opened once, not a walk from
    ``/`` per location."""
    # given
    table = tmp_path / "wh" / "t"
    wanted = []
    for day in range(3):
        for hour in range(8):
            folder = table / f"dt={day}" / f"hour={hour}"
            folder.mkdir(parents=True)
            (folder / "a").write_bytes(b"12345")
            wanted.append(f"file:{folder}")
    opened: list[str] = []
    real_open = os.open

    def counting_open(path: str, flags: int, *args: object, **kwargs: object) -> int:
        opened.append(path)
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting_open)

    # when
    sizes = local_tree_sizes(wanted)

    # then
    monkeypatch.undo()
    assert set(sizes.values()) == {TreeSize(files=1, bytes=5)} and len(sizes) == 24
    directories = len(table.parts) + 3 + 24  # "/" and every component of the table's path, the days, the hours
    assert len(opened) == directories


def test_links_above_many_locations_are_found_with_nothing_asked_below_a_missing_directory(
    table: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Locations below a link name that link; below a directory that does not exist no path is asked again."""
    # given
    (table / "dt=2").symlink_to(outside)
    missing = [f"file:{table}/trash/fp/dt={day}/hour={hour}" for day in range(5) for hour in range(10)]
    linked = f"file:{table}/dt=2/hour=1"
    asked: list[str] = []
    real_lstat = os.lstat

    def counting_lstat(path: str, *args: object, **kwargs: object) -> os.stat_result:
        asked.append(str(path))
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", counting_lstat)

    # when
    found = locations.linked_ancestors([*missing, linked, f"file:{table}/dt=1"])

    # then
    monkeypatch.undo()
    assert found == {linked: f"file:{table}/dt=2"}
    assert len(asked) == len(set(asked))
    assert not [path for path in asked if "/trash/" in path]  # only trash itself, which does not exist


def test_listings_in_one_descent_are_each_directorys_own_and_never_a_links_target(table: Path, outside: Path) -> None:
    """``list_directories`` answers as ``list_directory`` of each location: a directory's entries, None for a missing
    location, for a file in its place, and for a location that is or passes through a link (its target never
    listed)."""
    # given
    (table / "dt=2" / "hour=0").mkdir(parents=True)
    (table / "dt=2" / "hour=0" / "a").write_bytes(b"kept")
    (table / "dt=2" / "hour=0" / "_SUCCESS").write_bytes(b"")
    (table / "dt=2" / "hour=1").mkdir()
    (table / "dt=2" / "file").write_bytes(b"x")
    (outside / "moved" / "hour=0").mkdir(parents=True)
    (outside / "moved" / "hour=0" / "big").write_bytes(b"x" * 1000)
    (table / "dt=3").symlink_to(outside / "moved")
    (table / "dt=4").symlink_to(outside)
    wanted = [
        f"file:{table}/dt=1",
        f"file:{table}/dt=2/hour=0",
        f"file:{table}/dt=2/hour=1",
        f"file:{table}/dt=2/file",
        f"file:{table}/dt=2/hour=9",
        f"file:{table}/dt=3/hour=0",
        f"file:{table}/dt=4",
    ]

    # when
    listed = locations.list_directories(reversed(wanted))

    # then
    one_by_one = {location: LocalFileSystem().list_directory(location) for location in wanted}
    assert listed == one_by_one
    assert [entry.name for entry in listed[f"file:{table}/dt=2/hour=0"] or ()] == ["_SUCCESS", "a"]
    assert listed[f"file:{table}/dt=2/hour=1"] == ()
    unlistable = ("dt=2/file", "dt=2/hour=9", "dt=3/hour=0", "dt=4")
    assert [listed[f"file:{table}/{name}"] for name in unlistable] == [None] * len(unlistable)
