"""
Commit markers: the row an execution's metastore transaction writes, read back by reconcile with a fence insert.
"""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Sequence
from catalog_admin.selectors.metastores import Metastore
from operations.services.commit_markers import (
    claim_commit_marker,
    drop_commit_marker,
    new_commit_marker,
    write_commit_marker,
)

pytestmark = pytest.mark.parametrize("metastore_alias", ["hive23_my", "hive31_pg", "hive_sqlite"], indirect=True)


def test_a_written_marker_reads_as_committed(metastore: Metastore) -> None:
    """The execution's row is there: the claim says committed and leaves the row as it was."""
    # given
    marker = new_commit_marker()
    with allow_metastore_writes():
        write_commit_marker(metastore, marker, 42)

        # when
        committed = claim_commit_marker(metastore, marker)

    # then
    assert committed is True
    assert Sequence.objects.using(metastore.alias).get(name=marker).next_val == 42


def test_a_missing_marker_is_fenced_against_a_late_write(metastore: Metastore) -> None:
    """No row: not committed, and while the fence stands the execution cannot write its marker (so cannot commit);
    dropping the fence leaves SEQUENCE_TABLE as it was."""
    # given
    marker = new_commit_marker()
    rows = list(Sequence.objects.using(metastore.alias).order_by("name").values_list("name", "next_val"))

    with allow_metastore_writes():
        # when
        committed = claim_commit_marker(metastore, marker)

        # then
        assert committed is False
        with pytest.raises(IntegrityError), transaction.atomic(using=metastore.alias):
            write_commit_marker(metastore, marker, 42)
        drop_commit_marker(metastore, marker)
    assert list(Sequence.objects.using(metastore.alias).order_by("name").values_list("name", "next_val")) == rows


def test_markers_are_unique_and_fit_the_sequence_name_column(metastore: Metastore) -> None:
    """Each execution gets its own name, short enough for SEQUENCE_NAME (varchar 255)."""
    # given / when
    markers = {new_commit_marker() for _ in range(100)}

    # then
    assert len(markers) == 100
    assert all(m.startswith("catalog_admin.commit:") and len(m) <= 255 for m in markers)
