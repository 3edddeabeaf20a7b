"""The one SEQUENCE_TABLE allocator: blocks above NEXT_VAL and above every id in use, as DataNucleus hands them out."""

from __future__ import annotations

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.ids import SEQUENCE_PREFIX, allocate_ids, sequence_name
from catalog_admin.models import Sequence, Table
from catalog_admin.seeding.context import SEQUENCE_SPACES
from catalog_admin.selectors.metastores import Metastore

pytestmark = pytest.mark.django_db(databases="__all__")


def test_the_seeder_and_executions_name_the_same_sequences() -> None:
    """Every id space the seeder reserves from SEQUENCE_TABLE is the allocator's row for that model."""
    # when
    names = {space: sequence_name(sources[0][0]) for space, sources in SEQUENCE_SPACES.items()}

    # then
    assert names == {space: SEQUENCE_PREFIX + space for space in SEQUENCE_SPACES}


def test_a_block_starts_above_next_val_and_above_ids_in_use(metastore: Metastore) -> None:
    """Two blocks never overlap, start above every TBL_ID, and leave NEXT_VAL past the second block."""
    # given
    top = max(Table.objects.using(metastore.alias).values_list("id", flat=True))

    # when
    with allow_metastore_writes():
        first = allocate_ids(metastore.alias, Table, 3)
        second = allocate_ids(metastore.alias, Table, 2)

    # then
    assert first > top
    assert second >= first + 3
    next_val = Sequence.objects.using(metastore.alias).get(name=sequence_name(Table)).next_val
    assert next_val == second + 2
