"""
Server time of the browsing pages and API at scale, with the query plans behind them.

    .venv/bin/python benchmarks/browse.py [--tables 100000] [--partitions 1000000] [--col-stats 5] [--keep]

Creates PostgreSQL database ``ca_bench_browse`` with Hive's official 3.1.0 schema, seeds it with
``seed_metastore`` (demo content, N extra tables, ``bench.events`` with P partitions), then times each
page in-process with Django's test client (median of 7 after a warm-up) and EXPLAINs every query the
page ran, flagging sequential scans of the big tables; then creates the opt-in search indexes
(``catalog_admin.search_index``) and times the search pages again. Results go to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import re

from common import REPO, median_ms, recreate_metastore, setup_django, timed, write_section

DATABASE = "ca_bench_browse"
BIG_TABLES = (
    "TBLS",
    "PARTITIONS",
    "PARTITION_KEY_VALS",
    "PARTITION_PARAMS",
    "PART_COL_STATS",
    "SDS",
    "COLUMNS_V2",
    "TABLE_PARAMS",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--col-stats", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="reuse an already seeded database")
    parser.add_argument(
        "--natural-partitions",
        type=int,
        default=50_000,
        help="partitions of bench.events_2, paged in the natural order (at most 100,000); added when missing",
    )
    args = parser.parse_args()

    if not args.keep:
        recreate_metastore(DATABASE, "3.1.0")
    setup_django(f"bench=postgresql://postgres@127.0.0.1:5432/{DATABASE}")
    from django.core.management import call_command

    seed_seconds = None
    if not args.keep:
        seed_seconds, _ = timed(
            "seed",
            lambda: call_command(
                "seed_metastore",
                metastore="bench",
                tables=args.tables,
                big_table_partitions=args.partitions,
                col_stats=args.col_stats,
                warehouse=str(REPO / "var" / "bench" / "warehouse"),
            ),
        )
        _analyze()
    _ensure_natural_table(args.natural_partitions)
    from catalog_admin.search_index import drop_search_indexes

    drop_search_indexes("bench")  # a --keep run starts without them, as a fresh metastore does
    rows = measure_pages()
    # The opt-in trigram indexes (manage.py search_index --create): the search pages again, with them.
    from catalog_admin.search_index import create_search_indexes

    create_search_indexes("bench")
    _analyze()
    rows += measure_pages(only="search", suffix=" (trigram indexes)")
    report(args, seed_seconds, rows)


def _ensure_natural_table(partitions: int) -> None:
    """bench.events_2 with ``partitions`` partitions (dt string, hour int): its pages sort hours as numbers."""
    from django.core.management import call_command

    from catalog_admin.models import Table

    if not Table.objects.using("bench").filter(database__name="bench", name="events_2").exists():
        call_command("seed_metastore", metastore="bench", big_table_partitions=partitions, verbosity=0)
        _analyze()


def _natural_pages() -> list[tuple[str, str]]:
    from catalog_admin.models import Partition, Table
    from catalog_admin.selectors.metastores import get_metastore
    from catalog_admin.selectors.pagination import encode_cursor
    from catalog_admin.selectors.partition_order import natural_order, sort_key_names
    from catalog_admin.selectors.partitions import table_partition_keys

    table = Table.objects.using("bench").get(database__name="bench", name="events_2")
    keys = table_partition_keys(get_metastore("bench"), table)
    count = Partition.objects.using("bench").filter(table=table).count()
    order = sort_key_names(keys, count)
    row = natural_order(Partition.objects.using("bench").filter(table=table), keys, count).values_list(*order)[
        count // 2
    ]
    label = f"partitions of bench.events_2 ({count:,}, natural order)"
    url = "/m/bench/db/bench/t/events_2/partitions/"
    return [
        (f"{label}, first page", url),
        (f"{label}, page in the middle", f"{url}?cursor={encode_cursor(list(row))}"),
        (f"{label}, missing on disk", f"{url}?anomaly=missing"),
        (f"partition anomalies of bench.events_2 ({count:,})", f"{url}anomalies/"),
        (
            f"API: partition charts of bench.events_2 ({count:,})",
            "/api/metastores/bench/databases/bench/tables/events_2/partition-charts/",
        ),
    ]


def _analyze() -> None:
    from django.db import connections

    from catalog_admin.db import allow_metastore_writes

    with allow_metastore_writes(), connections["bench"].cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def _pages() -> list[tuple[str, str]]:
    from catalog_admin.models import Partition, Table

    big_db = _busiest_database()
    from catalog_admin.selectors.metastores import get_metastore
    from catalog_admin.selectors.pagination import encode_cursor
    from catalog_admin.selectors.partition_order import natural_order, sort_key_names
    from catalog_admin.selectors.partitions import table_partition_keys

    events = Table.objects.using("bench").get(database__name="bench", name="events")
    keys = table_partition_keys(get_metastore("bench"), events)
    count = _events_partitions()
    order = sort_key_names(keys, count)  # the page's keyset: natural up to 100,000 partitions, else PART_NAME
    middle_row = natural_order(Partition.objects.using("bench").filter(table=events), keys, count).values_list(*order)[
        count // 2
    ]
    middle = middle_row[-1]
    cursor = encode_cursor(list(middle_row))
    day = middle.split("/")[0].split("=")[1]
    names = Table.objects.using("bench").filter(database__name=big_db).order_by("name").values_list("name", flat=True)
    some_table = names[names.count() // 2]
    api_events = "/api/metastores/bench/databases/bench/tables/events/"
    return [
        ("metastores overview", "/"),
        ("databases with counts", "/m/bench/"),
        (f"tables of {big_db} (first page)", f"/m/bench/db/{big_db}/"),
        (f"tables of {big_db}, name search", f"/m/bench/db/{big_db}/?q=t_12"),
        (f"tables of {big_db}, sorted by -created", f"/m/bench/db/{big_db}/?sort=-created"),
        (f"tables of {big_db}, partitioned only", f"/m/bench/db/{big_db}/?partitioned=true"),
        ("table page of a small table", f"/m/bench/db/{big_db}/t/{some_table}/"),
        ("table page of bench.events", "/m/bench/db/bench/t/events/"),
        ("partitions of bench.events (first page)", "/m/bench/db/bench/t/events/partitions/"),
        ("partitions of bench.events (page in the middle)", f"/m/bench/db/bench/t/events/partitions/?cursor={cursor}"),
        ("partitions of bench.events, filtered by dt", f"/m/bench/db/bench/t/events/partitions/?key.dt={day}"),
        ("partition page", f"/m/bench/db/bench/t/events/p/{middle}/"),
        ("global search", "/search/?q=events&metastore=bench"),
        ("search: qualified name", f"/search/?q={big_db}.{some_table}&metastore=bench"),
        ("search: column name", "/search/?q=event_ty&metastore=bench"),
        ("search: typeahead", f"/search/suggestions/?q={some_table[:5]}&metastore=bench"),
        ("partition anomalies of bench.events", "/m/bench/db/bench/t/events/partitions/anomalies/"),
        ("API: partition charts of bench.events", f"{api_events}partition-charts/"),
        ("API: sample of bench.events (no files)", f"{api_events}sample/?limit=20"),
        ("API: tables", f"/api/metastores/bench/databases/{big_db}/tables/"),
        ("API: partitions (middle)", f"{api_events}partitions/?cursor={cursor}"),
        ("API: table detail", api_events),
        *_natural_pages(),
    ]


def _events_partitions() -> int:
    from catalog_admin.models import Partition

    return Partition.objects.using("bench").filter(table__database__name="bench", table__name="events").count()


def _busiest_database() -> str:
    from django.db.models import Count

    from catalog_admin.models import Table

    row = Table.objects.using("bench").values("database__name").annotate(n=Count("id")).order_by("-n").first()
    return row["database__name"]


def measure_pages(only: str = "", suffix: str = "") -> list[tuple[str, str, float, int, list[str]]]:
    from django.contrib.auth import get_user_model
    from django.db import connections
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    user, _ = get_user_model().objects.get_or_create(username="bench")
    client = Client()
    client.force_login(user)
    rows = []
    for label, url in _pages():
        if only not in label:
            continue
        label += suffix
        response = client.get(url)
        assert response.status_code in (200, 404), f"{url} answered {response.status_code}"
        with CaptureQueriesContext(connections["bench"]) as queries:
            client.get(url)
        captured = list(queries.captured_queries)
        scans = _sequential_scans(captured)
        ms = median_ms(lambda url=url: client.get(url))
        rows.append((label, url, ms, len(captured), scans))
        print(f"{ms:8.1f} ms  {len(captured):3d} queries  {label}  {' '.join(scans)}", flush=True)
    return rows


def _sequential_scans(queries: list[dict]) -> list[str]:
    """Big tables a query plan reads with a sequential scan."""
    from django.db import connections

    found = set()
    with connections["bench"].cursor() as cursor:
        for query in queries:
            sql = query["sql"]
            if not sql.lstrip().upper().startswith("SELECT"):
                continue
            cursor.execute("EXPLAIN " + sql)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            for table in re.findall(r'Seq Scan on "?(\w+)"?', plan):
                if table in BIG_TABLES:
                    found.add(f"SeqScan:{table}")
    return sorted(found)


def report(args: argparse.Namespace, seed_seconds: float | None, rows: list) -> None:
    lines = [
        "Command: `.venv/bin/python benchmarks/browse.py "
        f"--tables {args.tables} --partitions {args.partitions} --col-stats {args.col_stats}`",
        "",
        f"Machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"2 cores (load average {os.getloadavg()[0]:.1f} when the report was written); "
        "PostgreSQL 15 on 127.0.0.1, Hive 3.1.0 official schema.",
        "",
    ]
    if seed_seconds is not None:
        lines += [
            f"Seeding {args.tables:,} tables plus `bench.events` with {args.partitions:,} partitions and "
            f"{args.partitions * args.col_stats:,} statistics rows: **{seed_seconds:.1f} s**.",
            "",
        ]
    lines += [
        "Server time per page (in-process Django test client, median of 7 after a warm-up; target < 100 ms):",
        "",
        "| page | median ms | queries | sequential scans of big tables |",
        "|---|---:|---:|---|",
    ]
    lines += [
        f"| {label} | {ms:.1f} | {count} | {', '.join(scans) or 'none'} |" for label, _url, ms, count, scans in rows
    ]
    write_section(REPO / "docs" / "benchmarks.md", "Browsing at scale", "\n".join(lines))


if __name__ == "__main__":
    main()
