"""
Merge execution on real metastores: a seeded source's databases merged (renamed, relocated) into a fresh seeded
PostgreSQL target, then compared by name with the source; a failure before publishing leaves the target unchanged
and resumes; revert restores the target's dump; ids allocated on the target during the import never collide.
These tests commit into their own targets (``tests/fixtures/merge.py``), so they are not ``django_db`` tests.
"""

from __future__ import annotations

import pytest
from django.conf import settings

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.merge.copy_plan import COPY_TABLES
from operations.merge.execute import merge_execute, merge_resume
from operations.merge.preview import merge_preview
from operations.merge.reads import MetastoreReader
from operations.merge.request import MergeRequest, parse_location_rule
from operations.merge.revert import merge_revert
from operations.models import MergeImport
from operations.spark.programs import merge as program
from operations.spark.programs.merge import location_rewriter
from tests.fixtures.merge import database_dump, metastore_dump

pytestmark = [pytest.mark.matrix, pytest.mark.slow]

RENAMES = (("marketing", "marketing_imported"), ("sales", "sales_imported"))


def _warehouse(alias: str) -> str:
    return next(c.warehouse_location for c in settings.METASTORE_CONFIGS if c.name == alias)


def _request(source: str, target: str) -> MergeRequest:
    rule = parse_location_rule(f"{_warehouse(source)}={_warehouse(target)}/imported_from_{source}")
    return MergeRequest(
        source=source, target=target, databases=("marketing", "sales"), renames=RENAMES, location_rules=(rule,)
    )


def _expected(source: str, request: MergeRequest, database: str) -> dict[str, list[tuple]]:
    """The source database's dump with the declared location rule applied (the only rewrite a dump shows)."""
    rewrite = location_rewriter([[r.old, r.new] for r in request.location_rules])
    dump = database_dump(source, database)
    dump["database"] = [(row[0], rewrite(row[1]), *row[2:]) for row in dump["database"]]
    dump["tables"] = [(*row[:5], rewrite(row[5]), *row[6:]) for row in dump["tables"]]
    dump["partitions"] = [(*row[:3], rewrite(row[3]), *row[4:]) for row in dump["partitions"]]
    return dump


PAIRS = [
    pytest.param("hive23_pg", "2.3.0", id="pg23-to-pg23"),
    pytest.param("hive23_my", "3.1.0", id="mariadb23-to-pg31"),
    pytest.param("hive31_pg", "4.0.0", id="pg31-to-pg40"),
]


@pytest.mark.parametrize(("source", "version"), PAIRS)
def test_merge_imports_the_databases_as_the_source_has_them(source: str, version: str, merge_target) -> None:
    """After the merge each renamed database's dump equals the source's (locations rewritten by the rule), ids lie
    in the journaled ranges, the target's own databases are untouched and Hive's allocators continue past them."""
    # given
    target = merge_target(version)
    request = _request(source, target)
    own_sales = database_dump(target, "sales")
    events: list[dict] = []
    # when
    merge = merge_execute(request, merge_preview(request), report=events.append)
    # then
    assert merge.state == MergeImport.State.PUBLISHED
    for old, new in RENAMES:
        assert database_dump(target, new) == _expected(source, request, old)
    assert database_dump(target, "sales") == own_sales
    tgt = MetastoreReader(target)
    low, high = merge.id_ranges["PARTITIONS"]
    partitions = tgt.scalar(
        'SELECT COUNT(*) FROM "PARTITIONS" p JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" '
        'JOIN "DBS" d ON d."DB_ID" = t."DB_ID" WHERE d."NAME" IN (%s, %s)',
        [new for _, new in RENAMES],
    )
    assert partitions == tgt.scalar('SELECT COUNT(*) FROM "PARTITIONS" WHERE "PART_ID" BETWEEN %s AND %s', [low, high])
    assert partitions > 0
    sequence = 'SELECT "NEXT_VAL" FROM "SEQUENCE_TABLE" WHERE "SEQUENCE_NAME" LIKE %s'
    assert tgt.scalar(sequence, ["%.MPartition"]) > high
    assert events[-1]["partitions_done"] == events[-1]["partitions_total"]
    for stats, key in (("TAB_COL_STATS", "TBL_ID"), ("PART_COL_STATS", "PART_ID")):
        if "DB_NAME" in tgt.columns(stats):  # 2.3/3.1 statistics name their database: the new name
            owner = "TBLS" if key == "TBL_ID" else "PARTITIONS"
            names = tgt.rows(f'SELECT DISTINCT "DB_NAME" FROM "{stats}" WHERE "{key}" BETWEEN %s AND %s',
                             merge.id_ranges[owner])  # fmt: skip
            assert {n for (n,) in names} == {new for _, new in RENAMES}


def test_a_changed_plan_is_refused(merge_target) -> None:
    """A preview approved before the request changed is stale: nothing is reserved, nothing written."""
    # given
    target = merge_target("3.1.0")
    request = _request("hive23_pg", target)
    approved = merge_preview(MergeRequest(source="hive23_pg", target=target, databases=("sales",),
                                          renames=(("sales", "sales_imported"),)))  # fmt: skip
    before = metastore_dump(target, skip=())
    # when
    with pytest.raises(ApplicationError) as raised:
        merge_execute(request, approved)
    # then
    assert raised.value.code == ErrorCode.STALE_PREVIEW
    assert metastore_dump(target, skip=()) == before


def test_a_failure_before_publishing_leaves_the_target_unchanged_and_resumes(merge_target, monkeypatch) -> None:
    """A crash in the publishing transaction (after every invisible unit committed) leaves no database, table or
    partition visible: the dump of everything Hive reads is as before; resume then publishes all of it."""
    # given
    target = merge_target("3.1.0")
    request = _request("hive31_pg", target)
    invisible = ("SEQUENCE_TABLE", *COPY_TABLES)  # written before publishing, reachable from no DBS/TBLS row
    before = metastore_dump(target, skip=invisible)

    def crash(name: str) -> None:
        if name == "merge.before_publish_commit":
            raise RuntimeError("injected crash")

    monkeypatch.setattr(program, "fault_point", crash)
    # when
    with pytest.raises(RuntimeError, match="injected crash"):
        merge_execute(request, merge_preview(request))
    # then
    merge = MergeImport.objects.get(target=target)
    assert merge.state == MergeImport.State.FAILED and "injected crash" in merge.error
    assert merge.completed  # the invisible units are journaled
    assert metastore_dump(target, skip=invisible) == before
    # when
    monkeypatch.undo()
    merge_resume(merge)
    # then
    merge.refresh_from_db()
    assert merge.state == MergeImport.State.PUBLISHED
    for old, new in RENAMES:
        assert database_dump(target, new) == _expected("hive31_pg", request, old)


def test_revert_restores_the_target(merge_target) -> None:
    """Revert deletes exactly the imported rows: every table of the target is as before (SEQUENCE_TABLE keeps the
    reservation consumed)."""
    # given
    target = merge_target("4.0.0")
    request = _request("hive31_pg", target)
    before = metastore_dump(target)
    merge = merge_execute(request, merge_preview(request))
    assert metastore_dump(target) != before
    # when
    merge_revert(merge)
    # then
    assert metastore_dump(target) == before
    assert MergeImport.objects.get(pk=merge.pk).state == MergeImport.State.REVERTED
