"""
Views follow their databases: a merge renaming a database rewrites the imported views' references to it (both texts,
and Spark's recorded database), shows them in the preview, or is blocked naming each view it cannot rewrite. On the
seeded metastores ``marketing.campaign_performance`` reads ``marketing.clicks`` and ``marketing.campaigns``.
"""

from __future__ import annotations

import pytest
from django.db import transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Table, TableParam
from operations.merge.execute import merge_execute
from operations.merge.preview import merge_preview
from operations.merge.reads import MetastoreReader
from operations.merge.request import MergeRequest
from operations.models import MergeImport

pytestmark = [pytest.mark.matrix]

RENAMES = (("marketing", "marketing_legacy"),)
VIEW = "campaign_performance"
NEW_EXPANDED = (
    "SELECT `c`.`name`, count(*) AS `clicks`, sum(`k`.`cost`) AS `cost` FROM `marketing_legacy`.`clicks` `k`"
    " JOIN `marketing_legacy`.`campaigns` `c` ON `k`.`campaign_id` = `c`.`campaign_id` GROUP BY `c`.`name`"
)
NEW_ORIGINAL = (
    "SELECT c.name, count(*) AS clicks, sum(k.cost) AS cost FROM marketing_legacy.clicks k"
    " JOIN marketing_legacy.campaigns c ON k.campaign_id = c.campaign_id GROUP BY c.name"
)
SPARK_PROPERTIES = {
    "view.catalogAndNamespace.numParts": "2",
    "view.catalogAndNamespace.part.0": "spark_catalog",
    "view.catalogAndNamespace.part.1": "marketing",
    "view.query.out.numCols": "3",
    "view.query.out.col.0": "name",
}


def _request(source: str, target: str) -> MergeRequest:
    return MergeRequest(source=source, target=target, databases=("marketing",), renames=RENAMES)


def _set_view(alias: str, *, expanded: str | None = None, properties: dict[str, str] | None = None) -> None:
    """The seeded view's expanded text and table parameters changed (in the test's transaction or committed)."""
    with allow_metastore_writes(), transaction.atomic(using=alias):
        view = Table.objects.using(alias).get(database__name="marketing", name=VIEW)
        if expanded is not None:
            Table.objects.using(alias).filter(pk=view.pk).update(view_expanded_text=expanded)
        for key, value in (properties or {}).items():
            TableParam.objects.using(alias).create(table_id=view.pk, key=key, value=value)


def _arrived(alias: str) -> tuple[str, str, dict[str, str]]:
    reader = MetastoreReader(alias)
    where = 'JOIN "DBS" d ON d."DB_ID" = t."DB_ID" WHERE d."NAME" = %s AND t."TBL_NAME" = %s'
    original, expanded = reader.rows(
        f'SELECT t."VIEW_ORIGINAL_TEXT", t."VIEW_EXPANDED_TEXT" FROM "TBLS" t {where}', ["marketing_legacy", VIEW]
    )[0]
    params = reader.rows(
        f'SELECT p."PARAM_KEY", p."PARAM_VALUE" FROM "TABLE_PARAMS" p JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" {where}',
        ["marketing_legacy", VIEW],
    )
    return original, expanded, dict(params)


@pytest.mark.django_db
def test_the_preview_shows_the_views_rewritten() -> None:
    """The preview lists the view as it will arrive: both texts naming the new database, and the fingerprint binds
    them."""
    # when
    preview = merge_preview(_request("hive31_pg", "hive40_pg"))
    # then
    assert preview.is_executable, preview.blockers
    [view] = preview.views
    assert (view.view, view.original_text, view.expanded_text) == (f"marketing_legacy.{VIEW}", NEW_ORIGINAL,
                                                                   NEW_EXPANDED)  # fmt: skip
    assert preview.as_dict()["views"][0]["expanded_text"] == NEW_EXPANDED


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("expanded", "properties", "problem"),
    [
        ("SELECT `k`.`marketing` FROM `marketing`.`clicks` `k`", {}, "uses 'marketing' both as a database"),
        ("SELECT 'marketing.clicks' AS `src` FROM `marketing`.`clicks`", {}, "inside a string literal or comment"),
        ("SELECT `name` FROM campaigns", {}, "reads unqualified table names"),
    ],
)
def test_a_view_that_cannot_follow_its_database_blocks_the_merge(
    expanded: str, properties: dict[str, str], problem: str
) -> None:
    """A view whose reference to the renamed database cannot be rewritten safely blocks the merge, named."""
    # given
    _set_view("hive31_pg", expanded=expanded, properties=properties)
    # when
    preview = merge_preview(_request("hive31_pg", "hive40_pg"))
    # then
    [blocker] = [b for b in preview.blockers if b.code == "view_reference"]
    assert f"'marketing.{VIEW}' " in blocker.message and problem in blocker.message
    assert blocker.subject == "1 views"
    assert not preview.is_executable


@pytest.mark.django_db
def test_a_spark_view_resolves_its_unqualified_names_in_the_new_database() -> None:
    """Spark records the database of a view's unqualified names: the text needs no rewrite, the property follows."""
    # given
    _set_view("hive31_pg", expanded="SELECT name FROM campaigns", properties=SPARK_PROPERTIES)
    # when
    preview = merge_preview(_request("hive31_pg", "hive40_pg"))
    # then
    assert preview.is_executable, preview.blockers
    [view] = preview.views
    assert (view.expanded_text, view.database) == ("SELECT name FROM campaigns", "marketing_legacy")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["pg", "my"])
def test_imported_views_read_their_renamed_databases(kind: str, merge_target) -> None:
    """After a merge renaming ``marketing``, the imported view's texts and Spark's recorded database name
    ``marketing_legacy``: none names the target's own ``marketing`` (which the old texts silently read). PostgreSQL to
    PostgreSQL pipes TABLE_PARAMS in SQL; into MariaDB every row passes the program's converters."""
    # given
    source, target = merge_target("2.3.0"), merge_target("3.1.0", kind)
    _set_view(source, properties=SPARK_PROPERTIES)
    request = _request(source, target)
    # when
    merge = merge_execute(request, merge_preview(request))
    # then
    assert merge.state == MergeImport.State.PUBLISHED
    original, expanded, params = _arrived(target)
    assert (original, expanded) == (NEW_ORIGINAL, NEW_EXPANDED)
    assert params["view.catalogAndNamespace.part.1"] == "marketing_legacy"
    assert params["view.catalogAndNamespace.part.0"] == "spark_catalog"
    assert params["view.query.out.col.0"] == "name"
