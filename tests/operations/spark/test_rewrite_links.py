"""
The rewrite program's executors open every planned file without following a symbolic link (issue 25, case 4): a
file swapped for a link after planning fails its row count, so the job verifies nothing and swaps nothing.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog_admin.locations import SymlinkRefused
from operations.spark.programs import rewrite


@pytest.mark.parametrize("file_format", ["parquet", "text", "avro"])
def test_a_planned_file_swapped_for_a_link_is_not_counted(tmp_path: Path, file_format: str) -> None:
    """The row count (footers, lines) of a link is refused; the real file is counted."""
    # given
    real = tmp_path / "real"
    if file_format == "parquet":
        pq.write_table(pa.table({"id": [1, 2]}), real)
    else:
        real.write_bytes(b"1\n2\n")
    (tmp_path / "leak").symlink_to(real)

    # when
    with pytest.raises(SymlinkRefused):
        rewrite._file_rows({}, file_format, f"file:{tmp_path / 'leak'}")

    # then
    if file_format != "avro":
        assert rewrite._file_rows({}, file_format, f"file:{real}") == 2
