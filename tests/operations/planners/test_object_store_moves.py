"""A directory "rename" on an object store copies and deletes: previews show that cost and refuse big ones."""

from __future__ import annotations

import pytest

from operations.planners.object_store_moves import object_store_move_findings
from operations.preview import DirectoryMove

S3_CONFIGURED = {"s3": {"region": "us-east-1"}, "hdfs": {}, "metastores": {}}


def move(source: str, files: int | None, size: int | None) -> DirectoryMove:
    return DirectoryMove(source, source + "_renamed", 1, 0, files, size, True, True, True)


def test_an_object_store_rename_shows_its_copy_cost(settings: pytest.FixtureRequest) -> None:
    """Files and bytes to copy, as a warning; a local rename has no such cost."""
    # given
    settings.CATALOG_OBJECT_STORE_RENAME_LIMIT_BYTES = 1000
    settings.CATALOG_FILESYSTEMS = S3_CONFIGURED

    # when
    blockers, warnings = object_store_move_findings([move("s3a://lake/t", 3, 900), move("file:/w/t", 3, 10**9)])

    # then
    assert blockers == []
    assert [(w.code, w.severity) for w in warnings] == [("object_store_copy", "warning")]
    assert "copies 3 file(s), 900 bytes" in warnings[0].message


@pytest.mark.parametrize(("files", "size"), [(3, 1001), (None, None)], ids=["too-big", "unknown-size"])
def test_a_big_or_unlisted_object_store_rename_points_to_the_relocation_job(
    settings: pytest.FixtureRequest, files: int | None, size: int | None
) -> None:
    """Above the limit, or when the size cannot be listed, the request thread refuses it and names WITH DATA."""
    # given
    settings.CATALOG_OBJECT_STORE_RENAME_LIMIT_BYTES = 1000
    settings.CATALOG_FILESYSTEMS = S3_CONFIGURED

    # when
    blockers, _warnings = object_store_move_findings([move("s3a://lake/t", files, size)])

    # then
    assert [b.code for b in blockers] == ["object_store_move_too_big"]
    assert "SET LOCATION 's3a://lake/t_renamed' WITH DATA" in blockers[0].message
