"""The rewrite program's rule for joining rows to their files by Spark's own ``_metadata.file_path``."""

from __future__ import annotations

import pytest

from operations.spark.programs.rewrite import _in_uri_form


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("file:/w/sales/orders/dt=2024-01-01/part-00000.parquet", True),
        ("s3a://bucket/w/t/k=v+1/f.parquet", True),
        ("hdfs://nn:8020/w/t/p=1/f", True),
        ("file:///w/t/f", False),  # Hadoop writes an empty authority away: file:/w/t/f
        ("file:/w//t/f", False),  # an empty segment is normalized away
        ("file:/w/./t/f", False),
        ("file:/w/../t/f", False),
        ("file:/w/a b/f", False),  # encoded as %20 in the URI
        ("file:/w/a%20b/f", False),
        ("file:/w/é/f", False),
    ],
)
def test_only_paths_spelled_as_their_uri_join_without_decoding(path: str, expected: bool) -> None:
    """A planned path is compared with ``_metadata.file_path`` as it is only when Hadoop's ``Path.toUri()`` would
    spell it the same way."""
    assert _in_uri_form(path) is expected
