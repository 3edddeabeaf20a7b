"""
``local_sampled_size``: a table directory sized with only some of its partition directories counted (the rest
scaled), everything else in it counted in full, no link followed — how a DROP TABLE preview sizes 100,000
partitions without opening each.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from catalog_admin import locations
from catalog_admin.locations import SampledSize, local_sampled_size, local_tree_sizes


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """Two days of four hourly partitions, each holding two files of 10 and 5 bytes; a 7-byte marker beside the
    days and an unregistered directory with one 3-byte file."""
    root = tmp_path / "wh" / "events"
    for day in ("dt=1", "dt=2"):
        for hour in range(4):
            leaf = root / day / f"hr={hour}"
            leaf.mkdir(parents=True)
            (leaf / "000000_0").write_bytes(b"x" * 10)
            (leaf / "000001_0").write_bytes(b"y" * 5)
    (root / "_SUCCESS").write_bytes(b"s" * 7)
    (root / "dt=1" / "stray").mkdir()
    (root / "dt=1" / "stray" / "f").write_bytes(b"abc")
    return root


def leaves_of(root: Path) -> list[str]:
    return sorted(f"file:{path}" for path in root.glob("dt=*/hr=*"))


def test_every_leaf_picked_counts_exactly_what_a_full_walk_counts(table: Path) -> None:
    # given
    leaves = leaves_of(table)

    # when
    size = local_sampled_size(f"file:{table}", leaves, leaves)

    # then
    full = local_tree_sizes([f"file:{table}"])[f"file:{table}"]
    assert full is not None
    assert size == SampledSize(files=full.files, bytes=full.bytes, counted=8, found=8)
    assert (size.files, size.bytes) == (8 * 2 + 2, 8 * 15 + 7 + 3)


def test_a_sample_is_scaled_to_every_leaf_found_and_the_rest_is_counted_in_full(table: Path) -> None:
    """Two of eight leaves counted: their 4 files and 30 bytes times four, plus the marker and the stray file."""
    # given
    leaves = leaves_of(table)

    # when
    size = local_sampled_size(f"file:{table}", leaves, [leaves[0], leaves[-1]])

    # then
    assert size == SampledSize(files=4 * 4 + 2, bytes=30 * 4 + 7 + 3, counted=2, found=8)


def test_an_unpicked_leaf_is_never_opened(table: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The descent opens the days, the stray directory and the one picked hour: no other hour."""
    # given
    leaves = leaves_of(table)
    opened: list[str] = []
    real_open_child = locations._open_child

    def spy(fd: int, name: str, path: Callable[[], str], create: bool) -> int:
        opened.append(path())
        return real_open_child(fd, name, path, create)

    monkeypatch.setattr(locations, "_open_child", spy)

    # when
    size = local_sampled_size(f"file:{table}", leaves, leaves[:1])

    # then
    below = sorted(path.removeprefix(f"{table}/") for path in opened if path.startswith(f"{table}/"))
    assert below == ["dt=1", "dt=1/hr=0", "dt=1/stray", "dt=2"]
    assert size == SampledSize(files=2 * 8 + 2, bytes=15 * 8 + 10, counted=1, found=8)


def test_leaves_missing_on_disk_are_not_in_the_scale(table: Path) -> None:
    # given
    leaves = leaves_of(table)
    ghosts = [f"file:{table}/dt=3/hr={hour}" for hour in range(4)]

    # when
    size = local_sampled_size(f"file:{table}", leaves + ghosts, [leaves[0]])

    # then
    assert size is not None
    assert (size.counted, size.found) == (1, 8)


def test_when_no_picked_leaf_is_on_disk_every_leaf_is_counted(table: Path) -> None:
    # given
    leaves = leaves_of(table)
    ghost = f"file:{table}/dt=3/hr=0"

    # when
    size = local_sampled_size(f"file:{table}", [*leaves, ghost], [ghost])

    # then
    assert size == SampledSize(files=18, bytes=130, counted=8, found=8)


def test_a_leaf_that_is_a_link_counts_as_the_link_and_is_never_followed(table: Path, tmp_path: Path) -> None:
    # given
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"z" * 1000)
    (table / "dt=2" / "hr=4").symlink_to(outside)
    leaves = [*leaves_of(table), f"file:{table}/dt=2/hr=4"]

    # when
    size = local_sampled_size(f"file:{table}", leaves, leaves)

    # then
    assert size == SampledSize(files=18 + 1, bytes=130 + len(str(outside)), counted=8, found=8)  # the link's own size


@pytest.mark.parametrize("how", ["missing", "link"])
def test_a_table_directory_missing_or_reached_through_a_link_has_no_size(table: Path, tmp_path: Path, how: str) -> None:
    # given
    target = tmp_path / "wh" / "alias"
    if how == "link":
        target.symlink_to(table)

    # when
    size = local_sampled_size(f"file:{target}", [f"file:{target}/dt=1/hr=0"], [f"file:{target}/dt=1/hr=0"])

    # then
    assert size is None


def test_a_leaf_inside_a_leaf_belongs_to_the_outer_one(table: Path) -> None:
    """A day registered as well as its hours: the day is the leaf found, its hours counted within it."""
    # given
    leaves = [f"file:{table}/dt=1", *leaves_of(table)]

    # when
    size = local_sampled_size(f"file:{table}", leaves, leaves)

    # then
    assert size == SampledSize(files=18, bytes=130, counted=5, found=5)
