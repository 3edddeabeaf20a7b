"""
Nothing is left behind in the warehouse by a rewrite (issue 25): CONCATENATE and SET FILEFORMAT … WITH DATA stage
below hidden directories, and after a successful swap (and its cleanup), a revert (and its cleanup), or a cancel, a
listing of the table's root (and of its database's directory, where the trash is) finds nothing hidden. The data's
home after the swap is the partition's own directory, as Hive's MoveTask leaves it; the old one waits in the
console's trash, never followed through a link, removed only when nothing in the metastore uses it.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Partition, StorageDescriptor
from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobState
from operations.models import Job, Relocation
from operations.planners.rewrite_swap import TRASH_DIR
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.jobs import job_cancel
from operations.services.relocate import relocate_execute, relocations_cleanup
from operations.services.revert import revert_preview
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import path_of
from tests.operations.services.test_rewrite import DAY, ORDERS, in_process, parquet_rows, split_into_small_files
from tests.operations.services.test_rewrite_jobs import executed

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("warehouse")]
STATEMENT = "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE"


def hidden_below(root: Path) -> list[str]:
    """Every file or directory below ``root`` whose name starts with ``_`` or ``.`` (links not followed)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.name.startswith(("_", ".")))


def roots(metastore: Metastore) -> tuple[Path, Path]:
    """The table's root and its database's directory (where the console's trash is)."""
    orders = table_row(metastore, "sales", "orders")
    return path_of(orders.sd.location), path_of(orders.database.location_uri)


def after_retention() -> None:
    Relocation.objects.update(keep_until=timezone.now() - timedelta(seconds=1))


def test_after_a_compaction_the_data_is_home_and_after_the_cleanup_nothing_hidden_is_left(
    metastore: Metastore,
) -> None:
    """The swap puts the new files into the partition's own directory (its location unchanged) and the old ones into
    the trash; the cleanup after the retention time removes the trashed directories with their emptied parents."""
    # given
    chosen = split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    root, database = roots(metastore)
    hidden_before = hidden_below(root) + hidden_below(database)
    preview = alter_preview_statement(metastore=metastore, statement=STATEMENT)
    units = preview.data_copy.units
    rows = {u.key: parquet_rows(path_of(chosen[u.key])) for u in units}
    orders = table_row(metastore, "sales", "orders")

    # when
    relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())

    # then: home, one file each, the same rows; the old files in the trash, nothing hidden in the table's root
    now = partition_locations(metastore, orders.id)
    for unit in units:
        assert now[unit.key] == chosen[unit.key]
        home = path_of(chosen[unit.key])
        assert len([p for p in home.iterdir() if not p.name.startswith(("_", "."))]) == 1
        assert parquet_rows(home) == rows[unit.key]
        assert parquet_rows(path_of(unit.retained)) == rows[unit.key]
        assert f"/{TRASH_DIR}/orders/" in unit.retained
    assert hidden_below(root) == hidden_before

    # and when the retention time is over
    after_retention()
    cleaned = relocations_cleanup()
    assert [r.state for r in cleaned] == [Relocation.State.CLEANED]
    assert hidden_below(root) + hidden_below(database) == hidden_before
    assert all(parquet_rows(path_of(chosen[u.key])) == rows[u.key] for u in units)


def test_after_a_revert_and_its_cleanup_nothing_hidden_is_left(metastore: Metastore) -> None:
    """Revert moves the old directories back home and the new ones back into their staging directory; the cleanup
    removes those and the emptied staging directory; the trash's emptied directories went with the revert."""
    # given
    chosen = split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    root, database = roots(metastore)
    hidden_before = hidden_below(root) + hidden_below(database)
    preview = alter_preview_statement(metastore=metastore, statement=STATEMENT)
    before = {u.key: sorted(p.name for p in path_of(chosen[u.key]).iterdir()) for u in preview.data_copy.units}
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())

    # when
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    cleaned = relocations_cleanup()

    # then
    assert [r.state for r in cleaned] == [Relocation.State.REVERTED]
    assert {k: sorted(p.name for p in path_of(chosen[k]).iterdir()) for k in before} == before
    assert hidden_below(root) + hidden_below(database) == hidden_before


def test_after_a_cancel_nothing_hidden_is_left(
    metastore: Metastore, people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    """A job that wrote half its units and failed, then cancelled: its staging directories go, nothing else."""
    # given
    split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    root, _database = roots(metastore)
    hidden_before = hidden_below(root)
    _request, job = executed(people, metastore, django_capture_on_commit_callbacks)
    partial = path_of(job.plan["units"][0]["destination"])
    partial.mkdir(parents=True)
    (partial / "part-00000.parquet").write_bytes(b"half")
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED, completed=[job.plan["units"][0]["key"]])

    # when
    job_cancel(job=job, user=people["steward"])

    # then
    assert hidden_below(root) == hidden_before


def test_a_partition_on_another_filesystem_is_staged_and_trashed_beside_itself(metastore: Metastore) -> None:
    """A partition whose location lies outside its table's root is staged below its own parent (the unit's own
    filesystem and directory), and its old directory is trashed there too when the database's directory is on
    another filesystem; here on one filesystem the trash is the database's."""
    # given
    chosen = split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    root, _database = roots(metastore)
    key, location = next(iter(chosen.items()))
    elsewhere = root.parent / "orders_elsewhere" / "day"
    elsewhere.parent.mkdir()
    path_of(location).rename(elsewhere)
    orders = table_row(metastore, "sales", "orders")
    sd_id = Partition.objects.using(metastore.alias).get(table_id=orders.id, name=key).sd_id
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=sd_id).update(location=f"file:{elsewhere}")

    # when
    preview = alter_preview_statement(metastore=metastore, statement=STATEMENT)

    # then
    assert preview.blockers == (), preview.blockers
    unit = next(u for u in preview.data_copy.units if u.key == key)
    token = preview.inverse["token"]
    assert unit.destination == f"file:{elsewhere.parent}/_{token}/day"
    assert f"file:{root}/_{token}" in preview.inverse["staging"]
