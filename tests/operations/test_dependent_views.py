"""
Views that read a table are named in the previews that would break them, on every metastore.

The seeded view ``marketing.campaign_performance`` reads ``marketing.clicks`` and ``marketing.campaigns``
(Hive's expanded text: `marketing`.`clicks`). Spark keeps the text as written, resolved in a recorded database.
"""

from __future__ import annotations

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.dependent_views import views_reading
from operations.policy import approval_requirement
from operations.services.alter import alter_preview_statement
from operations.specs import TableRef

VIEW = "marketing.campaign_performance"
SPARK_TEXT = "SELECT name, count(*) AS clicks FROM clicks GROUP BY name"


def dependent_views(statement: str, metastore: Metastore) -> list[str]:
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    return [w.message for w in preview.warnings if w.code == "dependent_views"]


def rewrite_view(metastore: Metastore, text: str, database_param: str | None = None) -> None:
    """Make the seeded view look Spark-made: its text as written, optionally resolved in ``database_param``."""
    view = Table.objects.using(metastore.alias).get(database__name="marketing", name="campaign_performance")
    with allow_metastore_writes():
        Table.objects.using(metastore.alias).filter(id=view.id).update(view_original_text=text, view_expanded_text=text)
        if database_param is not None:
            TableParam.objects.using(metastore.alias).create(
                table_id=view.id, key="view.catalogAndNamespace.part.1", value=database_param
            )


def test_renaming_a_table_a_view_reads_names_the_view(metastore: Metastore) -> None:
    # when
    warnings = dependent_views("ALTER TABLE marketing.clicks RENAME TO marketing.clicks_v2", metastore)

    # then
    assert warnings == [
        f"1 view(s) read marketing.clicks and will fail after the rename (Hive does not rewrite view texts): {VIEW}."
    ]


def test_tables_no_view_reads_get_no_warning(metastore: Metastore) -> None:
    assert dependent_views("ALTER TABLE sales.orders RENAME TO sales.orders_v2", metastore) == []
    assert views_reading(metastore, TableRef("marketing", "campaign")) == ()  # a prefix of a name is no reference


def test_column_changes_name_the_view_only_when_a_column_is_renamed_retyped_or_dropped(metastore: Metastore) -> None:
    renamed = dependent_views("ALTER TABLE marketing.clicks CHANGE COLUMN cost cost_usd double CASCADE", metastore)
    added = dependent_views("ALTER TABLE marketing.clicks ADD COLUMNS (referrer string) CASCADE", metastore)
    comment_only = dependent_views(
        "ALTER TABLE marketing.clicks CHANGE COLUMN cost cost double COMMENT 'in USD' CASCADE", metastore
    )

    assert len(renamed) == 1
    assert "may fail where they use a renamed, retyped or dropped column" in renamed[0]
    assert renamed[0].endswith(f": {VIEW}.")
    assert (added, comment_only) == ([], [])


def test_a_spark_view_text_resolves_unqualified_names_in_its_recorded_database(metastore: Metastore) -> None:
    # given: the view's text names clicks without a database, as Spark stores it
    rewrite_view(metastore, SPARK_TEXT)
    clicks, sales_clicks = TableRef("marketing", "clicks"), TableRef("sales", "clicks")

    # then: resolved in the view's own database
    assert views_reading(metastore, clicks) == (VIEW,)
    assert views_reading(metastore, sales_clicks) == ()

    # when: Spark recorded another current database for the view
    rewrite_view(metastore, SPARK_TEXT, database_param="sales")

    # then
    assert views_reading(metastore, clicks) == ()
    assert views_reading(metastore, sales_clicks) == (VIEW,)


def test_a_column_or_alias_named_like_the_table_is_no_reference(metastore: Metastore) -> None:
    rewrite_view(metastore, "SELECT k.clicks, clicks.x AS clicks FROM marketing.campaigns clicks")

    assert views_reading(metastore, TableRef("marketing", "clicks")) == ()
    assert views_reading(metastore, TableRef("marketing", "campaigns")) == (VIEW,)


def test_renaming_a_view_another_view_reads_is_high_risk_and_asks_two_approvals(metastore: Metastore) -> None:
    """A view read by another view breaks it when renamed, as a table does: the warning names the reader, the
    ``views_broken`` criterion fires and the default policy asks two approvals."""
    # given a second view (marketing.campaigns made one) that the seeded view reads
    with allow_metastore_writes():
        Table.objects.using(metastore.alias).filter(database__name="marketing", name="campaigns").update(
            type="VIRTUAL_VIEW", view_original_text="SELECT 1", view_expanded_text="SELECT 1"
        )

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER VIEW marketing.campaigns RENAME TO marketing.campaigns_v2"
    )

    # then
    assert preview.blockers == ()
    assert [w.code for w in preview.warnings if w.code == "dependent_views"] == ["dependent_views"]
    assert VIEW in next(c for c in preview.criteria if c.name == "views_broken").explanation
    assert preview.risk == "high" and approval_requirement(preview.as_dict()) == (2, ["high risk"])
