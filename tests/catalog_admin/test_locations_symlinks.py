"""
The local filesystem never follows a symbolic link, at any level of a path: listings report links instead of
their targets, and reading, writing, copying, renaming and deleting through one are refused (issue 25, case 4).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from catalog_admin.locations import FileEntry, LocalFileSystem, SymlinkRefused


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
