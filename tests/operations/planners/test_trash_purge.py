"""
The governed purge of the console's trash (``ALTER TABLE t PURGE TRASH [OLDER THAN n DAYS]``): the preview lists the
entries, files and bytes it deletes and the executions that lose their revert; execution deletes exactly those,
re-checked at delete time; a revert of a purged execution is refused naming the purge; the metastore's retention is
the least age a purge may take.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.models import StorageDescriptor
from catalog_admin.selectors.metastores import Metastore
from operations.preview import Preview
from operations.services.alter import alter_preview_statement
from operations.services.revert import revert_preview
from operations.services.trash_purge import purge_trash_entries
from tests.fixtures.factories import table_row
from tests.fixtures.operations import execute, metastore_dump, path_of


def preview_of(metastore: Metastore, statement: str) -> Preview:
    return alter_preview_statement(metastore=metastore, statement=statement)


def codes(preview: Preview) -> list[str]:
    return [f.code for f in preview.blockers]


def test_purging_lists_what_goes_deletes_it_and_refuses_the_truncates_revert_naming_the_purge(
    metastore: Metastore, warehouse: Path
) -> None:
    """The purge's plan names every entry the truncate trashed and the truncate as losing its revert; executed, the
    entries are gone (the table's own directory and rows untouched), and reverting the truncate is refused as
    ``trash_purged``, naming the purge execution."""
    # given
    customers = table_row(metastore, "sales", "customers")
    truncated = execute(preview_of(metastore, "TRUNCATE TABLE sales.customers"))
    trashed = sorted(truncated.moves.values_list("destination", flat=True))
    rows = metastore_dump(metastore.alias, events=False)

    # when
    purge = preview_of(metastore, "ALTER TABLE sales.customers PURGE TRASH")
    purged = execute(purge)

    # then
    assert purge.blockers == ()
    assert purge.trash_purge is not None
    assert [e.location for e in purge.trash_purge.entries] == trashed
    assert purge.trash_purge.executions == (truncated.pk,)
    assert purge.risk == "high" and "trash_purged" in [c.name for c in purge.criteria]
    assert all(not path_of(location).exists() for location in trashed)
    assert path_of(customers.sd.location).is_dir()
    assert metastore_dump(metastore.alias, events=False) == rows
    refused = revert_preview(execution=truncated)
    found = {f.code: f.message for f in refused.blockers}
    assert f"by execution #{purged.pk}" in found["trash_purged"]
    with pytest.raises(ApplicationError):
        revert_preview(execution=purged)


def test_the_retention_is_the_least_age_a_purge_takes(metastore: Metastore, warehouse: Path) -> None:
    """With a 7-day retention, OLDER THAN 1 DAYS is refused naming the retention, and a purge without OLDER THAN
    takes only entries older than 7 days (none yet): nothing to purge."""
    # given
    execute(preview_of(metastore, "TRUNCATE TABLE sales.customers"))
    kept = replace(metastore, config=replace(metastore.config, trash_retention_days=7))

    # when
    younger = preview_of(kept, "ALTER TABLE sales.customers PURGE TRASH OLDER THAN 1 DAYS")
    default = preview_of(kept, "ALTER TABLE sales.customers PURGE TRASH")

    # then
    assert codes(younger) == ["within_retention"]
    assert "7 day(s)" in younger.blockers[0].message
    assert codes(default) == ["nothing_to_purge"]


def test_an_entry_the_metastore_points_at_by_delete_time_is_never_deleted(
    metastore: Metastore, warehouse: Path
) -> None:
    """Between the approval and the delete a table was pointed into the trash: the purge is refused, nothing goes."""
    # given
    customers = table_row(metastore, "sales", "customers")
    truncated = execute(preview_of(metastore, "TRUNCATE TABLE sales.customers"))
    purge = preview_of(metastore, "ALTER TABLE sales.customers PURGE TRASH")
    assert purge.trash_purge is not None
    entry = purge.trash_purge.entries[0].location
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=customers.sd_id).update(location=entry)

    # when
    with pytest.raises(ApplicationError, match="nothing was deleted"):
        purge_trash_entries(metastore, purge.trash_purge)

    # then
    assert all(path_of(d).exists() for d in truncated.moves.values_list("destination", flat=True))


def test_a_dropped_partitions_revert_is_refused_once_its_trash_is_purged(metastore: Metastore, warehouse: Path) -> None:
    """The one trash: a DROP PARTITION's data is purged like a truncate's, and its revert (which would put the
    partition back without its data) is refused naming the purge."""
    # given
    dropped = execute(preview_of(metastore, "ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-02', hour=3)"))

    # when
    purge = preview_of(metastore, "ALTER TABLE sales.orders PURGE TRASH")
    purged = execute(purge)

    # then
    assert purge.trash_purge is not None
    assert purge.trash_purge.executions == (dropped.pk,)
    assert [e.location for e in purge.trash_purge.entries] == list(dropped.moves.values_list("destination", flat=True))
    found = {f.code: f.message for f in revert_preview(execution=dropped).blockers}
    assert f"by execution #{purged.pk}" in found["trash_purged"]
