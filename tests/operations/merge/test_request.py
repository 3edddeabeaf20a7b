"""The merge request's parsing and rewriting: renames, location rules (pure, no database)."""

from __future__ import annotations

import pytest

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.merge.request import MergeRequest, parse_location_rule, parse_rename


def test_a_rename_is_a_pair_of_lower_case_names() -> None:
    """`Sales=Sales_EU` becomes ('sales', 'sales_eu'), as Hive stores database names."""
    # when / then
    assert parse_rename("Sales=Sales_EU") == ("sales", "sales_eu")


@pytest.mark.parametrize("text", ["sales", "=x", "sales=", "a=b=c"])
def test_a_malformed_rename_is_refused_naming_it(text: str) -> None:
    """A rename that is not src_db=new_name is an invalid_parameter error that quotes it."""
    # when
    with pytest.raises(ApplicationError) as caught:
        parse_rename(text)
    # then
    assert caught.value.code == ErrorCode.INVALID_PARAMETER
    assert f"'{text}'" in caught.value.message


def test_a_malformed_location_rule_is_refused_naming_it() -> None:
    """A rule without '=' is refused, quoting the rule."""
    # when
    with pytest.raises(ApplicationError) as caught:
        parse_location_rule("hdfs://old-ns/warehouse")
    # then
    assert caught.value.code == ErrorCode.INVALID_PARAMETER
    assert "hdfs://old-ns/warehouse" in caught.value.message


def test_location_rules_rewrite_prefixes_at_a_path_boundary_longest_first() -> None:
    """The longest matching prefix wins; /warehouse2 is not under /warehouse; other locations stay (normalized)."""
    # given
    request = MergeRequest(
        source="a",
        target="b",
        location_rules=(
            parse_location_rule("hdfs://old-ns/warehouse=hdfs://new-ns/warehouse"),
            parse_location_rule("hdfs://old-ns/warehouse/sales.db=hdfs://new-ns/eu/sales.db"),
        ),
    )
    # when / then
    assert request.rewrite("hdfs://old-ns/warehouse/ops.db/t") == "hdfs://new-ns/warehouse/ops.db/t"
    assert request.rewrite("hdfs://old-ns/warehouse/sales.db/orders") == "hdfs://new-ns/eu/sales.db/orders"
    assert request.rewrite("hdfs://old-ns/warehouse2/x") == "hdfs://old-ns/warehouse2/x"
    assert request.rewrite("file:///data/x/") == "file:/data/x"
