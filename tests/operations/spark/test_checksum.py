"""
The ``checksum`` program's driver listing and executor reads never follow a symbolic link (issue 25, case 4): a
directory holding one is refused naming it, and a file swapped for one after listing is not read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_admin.locations import SymlinkRefused
from operations.spark.programs import checksum


def test_a_directory_holding_a_link_is_refused_naming_it(tmp_path: Path) -> None:
    """The driver's listing names the link; nothing is digested."""
    # given
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a").write_bytes(b"a")
    (tmp_path / "secret").write_bytes(b"SECRET")
    (tmp_path / "t" / "leak").symlink_to(tmp_path / "secret")

    # when
    with pytest.raises(SymlinkRefused) as refused:
        checksum.run(None, {"directories": [f"file:{tmp_path / 't'}"]}, [].append)

    # then
    assert refused.value.filename == f"file:{tmp_path / 't' / 'leak'}"


def test_a_file_swapped_for_a_link_after_listing_is_not_read(tmp_path: Path) -> None:
    """The executor opens with O_NOFOLLOW: the planned path, now a link, is refused."""
    # given
    (tmp_path / "secret").write_bytes(b"SECRET")
    (tmp_path / "a").symlink_to(tmp_path / "secret")

    # when / then
    with pytest.raises(SymlinkRefused):
        checksum.file_digest((str(tmp_path / "a"), 6))
