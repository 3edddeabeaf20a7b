"""
Issue 11's proof on Spark: the seeded 2.3 PostgreSQL source (``hive23_pg``) merged by the merge program on the run's
real Spark session (JDBC reads, COPY writes from the executors) into the witness's 2.3 metastore (``spark_pg``), with
a database rename and a location rule; Spark's Hive 2.3 client then lists every imported table, ``SHOW PARTITIONS``
equals the source's partition names, and it reads the data files through the rewritten locations: the merge copied
them there (issue 26: the rule moves the data to another root, so the merge copies it with the relocation's verified
copy on the same Spark session before publishing). Reverting removes the databases and the copies again; the source's
files stay as they were.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from django.conf import settings

from operations.merge.execute import merge_execute
from operations.merge.preview import merge_preview
from operations.merge.request import MergeRequest, parse_location_rule
from operations.merge.revert import merge_revert
from operations.models import MergeImport
from tests.fixtures.merge import database_dump, rewritten_dump

pytestmark = [pytest.mark.spark]

SOURCE = "hive23_pg"


def _warehouse(alias: str) -> str:
    return next(c.warehouse for c in [*settings.METASTORE_CONFIGS, settings.SPARK_METASTORE_CONFIG] if c.name == alias)


def test_a_merge_on_spark_is_what_sparks_hive_client_lists_and_reads(
    spark,  # noqa: ANN001
    spark_metastore_registered,  # noqa: ANN001
    django_db_blocker,  # noqa: ANN001
) -> None:
    """Every imported table listed, the same partitions, the rows read through the rewritten locations, and the
    imported view reading its renamed database."""
    # given
    new_root = Path(_warehouse("spark_pg")) / "merged_from_hive23"  # inside the target's roots, as a merge requires
    shutil.rmtree(new_root, ignore_errors=True)
    source_files = _digests(Path(_warehouse(SOURCE)))
    rule = parse_location_rule(f"{Path(_warehouse(SOURCE))}={new_root}")
    request = MergeRequest(
        source=SOURCE,
        target="spark_pg",
        databases=("marketing", "sales"),
        renames=(("marketing", "marketing_merged"), ("sales", "sales_merged")),
        location_rules=(rule,),
    )
    events: list[dict] = []
    with django_db_blocker.unblock():
        source_dumps = {name: database_dump(SOURCE, name) for name in ("marketing", "sales")}
        # when
        preview = merge_preview(request)
        merge = merge_execute(request, preview, report=events.append, spark=spark)
        try:
            # then
            assert merge.state == MergeImport.State.PUBLISHED
            assert preview.data_copy.files == len(_digests(new_root)) > 0  # what the preview said it would copy
            copied = _digests(new_root)
            assert copied == {path: source_files[path] for path in copied}  # each copy equal to its source
            assert events[-1]["partitions_done"] == events[-1]["partitions_total"]
            for old, new in request.renames:  # Spark's column expressions give the same rows as the in-process path
                assert database_dump("spark_pg", new) == rewritten_dump(
                    SOURCE, old, [[rule.old, rule.new]], dict(request.renames)
                )
            for old, new in request.renames:
                listed = {r.tableName for r in spark.sql(f"SHOW TABLES IN {new}").collect()}
                assert listed == {row[0] for row in source_dumps[old]["tables"]}
            for old, new, table in (("sales", "sales_merged", "orders"), ("marketing", "marketing_merged", "clicks")):
                shown = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {new}.{table}").collect())
                assert shown == sorted(row[1] for row in source_dumps[old]["partitions"] if row[0] == table)
            clicks = spark.sql("SELECT * FROM marketing_merged.clicks").collect()
            files = [p for p in new_root.rglob("*") if p.is_file() and "clicks" in str(p.relative_to(new_root))]
            written = sum(len(p.read_text().splitlines()) for p in files if not p.name.startswith((".", "_")))
            assert len(clicks) == written > 0
            located = spark.sql("DESCRIBE FORMATTED marketing_merged.clicks").collect()
            assert any(str(new_root) in (r[1] or "") for r in located if r[0].strip() == "Location")
            # the imported view reads the renamed database (the target has no 'marketing': the old text fails here)
            by_view = spark.sql("SELECT SUM(clicks) FROM marketing_merged.campaign_performance").collect()[0][0]
            joined = spark.sql(
                "SELECT COUNT(*) FROM marketing_merged.clicks k JOIN marketing_merged.campaigns c "
                "ON k.campaign_id = c.campaign_id"
            ).collect()[0][0]
            assert by_view == joined > 0
        finally:
            merge_revert(merge)
            MergeImport.objects.filter(pk=merge.pk).delete()
    assert "sales_merged" not in {r[0] for r in spark.sql("SHOW DATABASES").collect()}
    assert _digests(new_root) == {}  # the revert removed the copies
    assert _digests(Path(_warehouse(SOURCE))) == source_files  # and never touched the source
    shutil.rmtree(new_root, ignore_errors=True)  # the empty directories the copies left


def _digests(root: Path) -> dict[str, str]:
    """Relative path → sha256 of every file under ``root``."""
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
