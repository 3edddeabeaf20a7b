"""
Fill a registered metastore with realistic demo content and, optionally, bulk content for scale tests.

The demo content (databases ``default``, ``sales``, ``marketing`` and ``ops``; managed, external,
view and ACID tables; partitions with stats; privileges; open transactions, locks and compactions)
is written once: a database or table that already exists is left alone, so seeding twice adds
nothing the second time. Its data files are real, small files under the warehouse directory.

The scale content is new on every run: ``tables`` adds tables named ``t_<TBL_ID>`` spread over the
``scale_a`` … ``scale_d`` databases, and ``big_table_partitions`` adds ``bench.events`` (``events_2``,
``events_3`` … when it exists). Scale content has no data files on disk. On PostgreSQL it is written
with one set-based ``INSERT … SELECT … FROM generate_series`` per metastore table; elsewhere with
batched ``executemany``.

Every id comes from Hive's own allocators: DataNucleus's ``SEQUENCE_TABLE`` (one block per model
class, reserved by raising ``NEXT_VAL`` once) and ``NEXT_TXN_ID`` / ``NEXT_LOCK_ID`` /
``NEXT_COMPACTION_QUEUE_ID`` for the ACID tables, so a running Hive that caches id blocks never
collides with what was seeded. Only the columns the metastore's schema version has are written.

Demo and scale tooling, outside the request path: the management commands ``seed_metastore`` and ``demo``, the tests
and the benchmarks import it; no view, API or selector does. One module per concern: ``content`` (what the demo
holds), ``context`` (ids and the run's shared state), ``runner`` (the entry point), ``databases``, ``demo``,
``files``, ``acid``, ``scale``, ``big_table``, ``reserve``, ``rows`` and ``bulk``.
"""

from __future__ import annotations

from catalog_admin.seeding.content import SeedOptions, SeedReport
from catalog_admin.seeding.context import BENCH_DATABASE, SCALE_DATABASES
from catalog_admin.seeding.runner import seed_metastore

__all__ = ("BENCH_DATABASE", "SCALE_DATABASES", "SeedOptions", "SeedReport", "seed_metastore")
