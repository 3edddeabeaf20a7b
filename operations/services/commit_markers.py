"""
Commit markers: how a crashed execution's metastore transaction is known to have committed, exactly.

``alter_execute`` inserts one row into the metastore's ``SEQUENCE_TABLE`` inside the same transaction as the
plan's statements, named by the execution's random ``commit_marker`` (``catalog_admin.commit:<hex>``). The row
exists after a crash if and only if that transaction committed; nothing else ever writes that name. Once the
console has recorded the outcome, the row is deleted again.

Why ``SEQUENCE_TABLE``: it is in every Hive schema (2.x to 4.x) and the console already writes it (id
allocation); DataNucleus and Hive read it only by their own sequence names (``org.apache.hadoop.hive.metastore.
model.M…``; Hive 4's ``DirectSqlInsertPart`` selects ``WHERE SEQUENCE_NAME in (?,?,?)``), so an extra row is seen
by no Hive client, no ``SHOW TBLPROPERTIES``, no replication and no fingerprint. A ``TABLE_PARAMS`` key would be
exact too, but every Hive and Spark user would see it on the table and it would change the table's fingerprint;
comparing "the rows the plan changed" with the plan's values is not exact once someone else edits those rows.

Reading the marker back (``claim_commit_marker``) inserts the same name as a fence: if the execution's row is
there, the insert fails (committed); if the execution's transaction wrote it and is still open, the insert waits
for that transaction to end; if the insert succeeds, a transaction that wrote the marker has rolled back, and
one that has not written it yet (so moved nothing, since the marker comes before the first move) cannot while
the fence stands. The fence also makes a second reconcile of the same execution wait. The caller deletes it
before committing, so the metastore ends exactly as before.
"""

from __future__ import annotations

import logging
import uuid

from django.db import DatabaseError, IntegrityError, transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Sequence
from catalog_admin.selectors.metastores import Metastore

__all__ = (
    "claim_commit_marker",
    "clear_commit_marker",
    "drop_commit_marker",
    "new_commit_marker",
    "write_commit_marker",
)

logger = logging.getLogger(__name__)

PREFIX = "catalog_admin.commit:"
FENCE = -1  # NEXT_VAL of a reconcile's fence row (an execution writes its own id)


def new_commit_marker() -> str:
    """A fresh, unguessable marker name (unique across consoles sharing a metastore)."""
    return f"{PREFIX}{uuid.uuid4().hex}"


def write_commit_marker(metastore: Metastore, marker: str, execution_id: int) -> None:
    """Insert the marker; call inside the execution's metastore transaction."""
    Sequence.objects.using(metastore.alias).create(name=marker, next_val=execution_id)


def clear_commit_marker(metastore: Metastore, marker: str) -> None:
    """Delete a marker once its outcome is recorded; a failure only leaves an inert row behind (logged)."""
    try:
        with allow_metastore_writes(), transaction.atomic(using=metastore.alias):
            Sequence.objects.using(metastore.alias).filter(name=marker).delete()
    except DatabaseError:
        logger.exception("Could not delete commit marker %s from %s", marker, metastore.name)


def claim_commit_marker(metastore: Metastore, marker: str) -> bool:
    """Whether the transaction that writes ``marker`` committed; call inside a metastore transaction.

    On ``False`` a fence row is left in the caller's transaction (delete it before committing). Waits while the
    writing transaction is still open; raises ``DatabaseError`` when the metastore cannot answer.
    """
    try:
        with transaction.atomic(using=metastore.alias):
            Sequence.objects.using(metastore.alias).create(name=marker, next_val=FENCE)
    except IntegrityError:
        return True
    return False


def drop_commit_marker(metastore: Metastore, marker: str) -> None:
    """Delete the marker (or a fence) inside the caller's metastore transaction."""
    Sequence.objects.using(metastore.alias).filter(name=marker).delete()
