"""
Server time of the home page (``operations:home``) on a metastore with a big partitioned table, and the plan of its
one metastore query (the tables with partitions outside their root).

    .venv/bin/python benchmarks/home.py [--partitions 50000] [--relocated 500] [--keep]

Creates PostgreSQL database ``ca_bench_home`` with Hive's official 3.1.0 schema, seeds it with ``seed_metastore``
(demo content and ``bench.events`` with P partitions), points R of them outside the table's root, then times the
page in-process (median of 7 after a warm-up) and EXPLAIN ANALYZEs the anomaly query. Results go to
``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import platform

from common import REPO, median_ms, recreate_metastore, setup_django, timed, write_section

DATABASE = "ca_bench_home"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=50_000)
    parser.add_argument("--relocated", type=int, default=500)
    parser.add_argument("--keep", action="store_true", help="reuse an already seeded database")
    args = parser.parse_args()

    if not args.keep:
        recreate_metastore(DATABASE, "3.1.0")
    setup_django(f"bench=postgresql://postgres@127.0.0.1:5432/{DATABASE}")
    from django.core.management import call_command

    if not args.keep:
        timed(
            "seed",
            lambda: call_command(
                "seed_metastore",
                metastore="bench",
                tables=0,
                big_table_partitions=args.partitions,
                col_stats=1,
                warehouse=str(REPO / "var" / "bench" / "warehouse"),
            ),
        )
        _relocate(args.relocated)
    page_ms, panel_ms, plan = _measure()
    _report(args, page_ms, panel_ms, plan)


def _relocate(count: int) -> None:
    """Point ``count`` partitions of ``bench.events`` outside the table's root, then ANALYZE."""
    from django.db import connections

    from catalog_admin.db import allow_metastore_writes

    with allow_metastore_writes(), connections["bench"].cursor() as cursor:
        cursor.execute(
            'UPDATE "SDS" SET "LOCATION" = REPLACE("LOCATION", \'/events/\', \'/events_elsewhere/\') '
            'WHERE "SD_ID" IN (SELECT p."SD_ID" FROM "PARTITIONS" p JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" '
            'WHERE t."TBL_NAME" = \'events\' ORDER BY p."PART_ID" LIMIT %s)',
            [count],
        )
        cursor.execute("ANALYZE")


def _measure() -> tuple[float, float, str]:
    from django.contrib.auth.models import User
    from django.db import connections
    from django.test import Client

    from catalog_admin.selectors.metastores import get_metastore
    from operations.work import anomaly_sql

    user, _ = User.objects.get_or_create(username="bench", defaults={"is_superuser": True})
    client = Client()
    client.force_login(user)
    response = client.get("/changes/home/anomalies/?metastore=bench")
    assert response.status_code == 200, response.status_code
    assert b"bench.events" in response.content, "the relocated partitions are not found"
    page_ms = median_ms(lambda: client.get("/changes/home/?metastore=bench"))
    panel_ms = median_ms(lambda: client.get("/changes/home/anomalies/?metastore=bench"))
    sql, params = anomaly_sql(get_metastore("bench"), 10)
    with connections["bench"].cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING ON) " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    return page_ms, panel_ms, plan


def _report(args: argparse.Namespace, page_ms: float, panel_ms: float, plan: str) -> None:
    body = (
        f"`benchmarks/home.py --partitions {args.partitions} --relocated {args.relocated}` on PostgreSQL "
        f"(Hive 3.1.0 schema), {platform.machine()}, shared two-core machine.\n\n"
        "| what | median |\n|---|---|\n"
        f"| `GET /changes/home/?metastore=bench` (the page: the console's own lists) | {page_ms:.0f} ms |\n"
        f"| `GET /changes/home/anomalies/?metastore=bench` (the panel htmx loads after it) | {panel_ms:.0f} ms |\n\n"
        "The panel's one metastore query, tables with partitions outside their root (`operations.work.anomaly_sql`), "
        "is one pass over `PARTITIONS` hash-joined to `SDS` and `TBLS` on their keys, grouped, under a `LIMIT`; it "
        "grows with the metastore's partitions, which is why the page does not wait for it:\n\n"
        f"```\n{plan}\n```\n"
    )
    write_section(REPO / "docs" / "benchmarks.md", "Home page at scale", body)
    print(body)


if __name__ == "__main__":
    main()
