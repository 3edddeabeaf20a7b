"""
``read_beside``: reads of one metastore spread over threads with connections of their own, results in order; inside
a transaction they stay on the caller's connection, the only one that sees what the transaction wrote.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connections, transaction

from catalog_admin.db import allow_metastore_writes
from operations.merge.reads import MetastoreReader, read_beside

SOURCE = "hive31_pg"


def _reads(seen: list[int], together: threading.Barrier | None = None) -> list:
    def read(number: int):  # noqa: ANN202 - one read: its thread, then a value from the metastore
        def run(reader: MetastoreReader) -> tuple[int, int]:
            seen.append(threading.get_ident())
            if together is not None and number < together.parties:
                together.wait()  # the first reads wait for each other: they run at the same time
            return number, reader.scalar('SELECT COUNT(*) FROM "DBS" WHERE "NAME" = %s', ["beside"])

        return run

    return [read(number) for number in range(6)]


def test_reads_run_on_threads_of_their_own_and_return_in_order(django_db_blocker) -> None:
    # given
    seen: list[int] = []
    # when
    with django_db_blocker.unblock():
        results = read_beside(SOURCE, _reads(seen, threading.Barrier(2, timeout=30)))
    # then
    assert results == [(number, 0) for number in range(6)]
    assert threading.get_ident() not in seen
    assert len(set(seen)) == 2


@pytest.mark.django_db(databases="__all__")
def test_inside_a_transaction_the_reads_see_its_writes_on_the_callers_connection() -> None:
    # given
    seen: list[int] = []
    with allow_metastore_writes(), transaction.atomic(using=SOURCE), connections[SOURCE].cursor() as cursor:
        cursor.execute('SELECT MAX("DB_ID") + 1 FROM "DBS"')
        cursor.execute(
            'INSERT INTO "DBS" ("DB_ID", "DESC", "DB_LOCATION_URI", "NAME", "OWNER_NAME", "OWNER_TYPE", "CTLG_NAME") '
            "VALUES (%s, '', 'file:/tmp/beside', 'beside', 'hive', 'USER', 'hive')",
            [cursor.fetchone()[0]],
        )
        # when
        results = read_beside(SOURCE, _reads(seen))
        transaction.set_rollback(True, using=SOURCE)
    # then
    assert results == [(number, 1) for number in range(6)]
    assert set(seen) == {threading.get_ident()}
