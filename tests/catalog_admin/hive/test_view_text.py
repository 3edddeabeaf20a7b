"""Database references in view texts: rewritten where they can only be a database, a problem named otherwise."""

from __future__ import annotations

import pytest

from catalog_admin.hive.view_text import rewrite_database_param, rewrite_view_text, view_text_problems

RENAMES = {"sales": "sales_legacy"}


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("SELECT `t`.`id` FROM `sales`.`t`", "SELECT `t`.`id` FROM `sales_legacy`.`t`"),
        ("select * from Sales . t join sales.u on 1=1", "select * from sales_legacy . t join sales_legacy.u on 1=1"),
        ("select * from spark_catalog.sales.t", "select * from spark_catalog.sales_legacy.t"),
        ("select sales.f(x) from sales.t", "select sales_legacy.f(x) from sales_legacy.t"),
        ("select * from other.sales_2024 s", "select * from other.sales_2024 s"),
        ("select 1.5 from `sales`.`t`", "select 1.5 from `sales_legacy`.`t`"),
    ],
)
def test_database_references_are_rewritten_in_their_quoting(text: str, rewritten: str) -> None:
    """A renamed database in a database's place is spelled with its new name, bare or backquoted as it was; other
    names, numbers and everything between are kept byte for byte."""
    # when
    result = rewrite_view_text(text, RENAMES)
    # then
    assert result == rewritten
    assert view_text_problems(text, text, RENAMES, check_unqualified=False) == ()


@pytest.mark.parametrize(
    ("original", "expanded", "problem"),
    [
        ("select sales.amount from other.t sales", None, "uses 'sales' both as a database"),
        ("select s.amount from sales.t s", "SELECT `s`.`sales`.`x` FROM `sales`.`t` `s`", "uses 'sales' both as"),
        ("select 'sales.t' as src from sales.t", None, "names 'sales.' inside a string literal or comment"),
        ("select * from sales.t -- copied from `sales`.t", None, "names 'sales.' inside a string literal or comment"),
        ("select 'open from sales.t", None, "unterminated quote or comment"),
        ("/* Presto View: eyJvcmlnaW5hbFNxbCI6ICJTRUxFQ1QgKiBGUk9NIHNhbGVzLnQifQ== */", None, "Presto/Trino view"),
        (None, "select * from t join sales.u", "unqualified table names"),
    ],
)
def test_a_reference_that_cannot_be_rewritten_safely_is_a_problem(
    original: str | None, expanded: str | None, problem: str
) -> None:
    """An ambiguous name, a reference-shaped text in a literal or comment, an unreadable or encoded text and
    unqualified names with no recorded database are named, and the text is left as it is."""
    # when
    problems = view_text_problems(original, expanded, RENAMES, check_unqualified=True)
    # then
    assert any(problem in p for p in problems), problems


def test_unqualified_names_are_fine_where_a_database_is_recorded_or_only_shown() -> None:
    """Hive's original text (only shown) and a text whose view records its database (Spark) may be unqualified; a
    common table expression is no table."""
    # then
    assert view_text_problems("select * from t", "SELECT * FROM `sales`.`t`", RENAMES, check_unqualified=True) == ()
    assert view_text_problems(None, "select * from t", RENAMES, check_unqualified=False) == ()
    with_cte = "with t as (select 1 as x) select * from t join sales.u"
    assert view_text_problems(None, with_cte, RENAMES, check_unqualified=True) == ()


def test_spark_database_properties_follow_the_rename() -> None:
    """``view.catalogAndNamespace.part.1`` and ``view.default.database`` name the new database; other keys stay."""
    # then
    assert rewrite_database_param("view.catalogAndNamespace.part.1", "Sales", RENAMES) == "sales_legacy"
    assert rewrite_database_param("view.default.database", "sales", RENAMES) == "sales_legacy"
    assert rewrite_database_param("view.catalogAndNamespace.part.0", "sales", RENAMES) == "sales"
    assert rewrite_database_param("view.query.out.col.0", "sales", RENAMES) == "sales"
    assert rewrite_database_param("view.default.database", "ops", RENAMES) == "ops"
