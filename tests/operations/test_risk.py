"""
Risk you can read (``operations.risk``): the named criteria a plan fires, the risk they give, and the approval
policy's rules matching on the same names (``operations.policy.rule_matches``). Pure: no database.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from operations.policy import DEFAULT_POLICY, approval_requirement, rule_matches
from operations.preview import CopyUnit, DataCopy, DirectoryMove, TableSnapshot
from operations.risk import CRITERIA, plan_criteria, risk_of
from operations.rules import Finding
from operations.specs import AbortTransactions, CompactFiles, CompactTable, ConvertFormat, Relocate, TableRef

TABLE = TableSnapshot(
    database="sales",
    name="orders",
    type="MANAGED_TABLE",
    owner="hive",
    location="file:/w/sales.db/orders",
    input_format=None,
    output_format=None,
    serde_lib=None,
    columns=(("id", "bigint", None), ("amount", "double", None)),
    partition_keys=(("dt", "string"),),
    params=(),
    serde_params=(),
)
MOVE = DirectoryMove("file:/w/a", "file:/w/b", 3, 0, 12, 4096, True, True, True)
COPY = DataCopy(
    units=(CopyUnit("dt=1", "file:/w/o/dt=1", "file:/n/dt=1"), CopyUnit("dt=2", "file:/w/o/dt=2", "file:/n/dt=2")),
    files=14,
    bytes=52_000,
    sampled_units=2,
    sample_files=14,
    sample_bytes=52_000,
    retention_hours=168.0,
)
ORDERS = TableRef("sales", "orders")
VIEW_WARNING = Finding("dependent_views", "views", "1 view(s) read sales.orders and will fail: sales.v.", "warning")


def criteria(**given):
    plan = {
        "before": TABLE,
        "after": TABLE,
        "moves": (),
        "warnings": (),
        "partitions_touched": 0,
        "statistics_moved": 0,
        "statistics_dropped": 0,
        "drops": 0,
        "columns_changed": False,
    }
    return plan_criteria(**(plan | given))


def summary(fired) -> dict:
    """The preview summary's fields the policy reads."""
    return {"risk": risk_of(fired), "criteria": [c.as_dict() for c in fired], "partitions_touched": 0}


def test_a_table_level_metadata_change_fires_nothing_and_is_low_risk() -> None:
    """No move, no count, no warning: no criterion, low risk, the default number of approvals."""
    # when
    fired = criteria()

    # then
    assert (fired, risk_of(fired)) == ((), "low")
    assert approval_requirement(summary(fired)) == (1, [])


@pytest.mark.parametrize(
    ("given", "name", "risk"),
    [
        pytest.param({"moves": (MOVE,)}, "data_moved", "high", id="data-moved"),
        pytest.param({"drops": 4, "partitions_touched": 4}, "partitions_dropped", "high", id="drop"),
        pytest.param({"statistics_dropped": 9}, "statistics_dropped", "high", id="statistics-dropped"),
        pytest.param({"warnings": (VIEW_WARNING,)}, "views_broken", "high", id="view-broken"),
        pytest.param({"statistics_moved": 200_000}, "statistics_rewritten", "medium", id="statistics-200k"),
        pytest.param({"partitions_touched": 20_000}, "many_partitions", "high", id="many-partitions"),
        pytest.param({"columns_changed": True}, "columns_changed", "medium", id="columns-changed"),
        pytest.param(
            {"warnings": (Finding("location_missing", "ddl", "file:/x does not exist yet.", "warning"),)},
            "location_missing",
            "medium",
            id="location-missing",
        ),
    ],
)
def test_each_effect_fires_its_named_criterion_and_the_risk_follows(given, name, risk) -> None:
    """The criterion carries its level, label and a sentence with the plan's own numbers or names."""
    # when
    fired = criteria(**given)

    # then
    assert name in [c.name for c in fired]
    assert risk_of(fired) == risk
    criterion = next(c for c in fired if c.name == name)
    assert (criterion.level, criterion.label) == CRITERIA[name]
    assert criterion.explanation


@pytest.mark.parametrize(
    ("spec", "names", "words"),
    [
        pytest.param(Relocate(ORDERS, "file:/n"), ["data_copied", "data_deleted"], "copies", id="relocate"),
        pytest.param(CompactFiles(ORDERS), ["data_rewritten", "data_deleted"], "into fewer files", id="concatenate"),
        pytest.param(ConvertFormat(ORDERS, "orc"), ["data_rewritten", "data_deleted"], "as ORC", id="convert"),
    ],
)
def test_a_data_job_fires_named_high_criteria_with_how_much_and_asks_two_approvals(spec, names, words) -> None:
    """Copying or rewriting data (and deleting the old copy after the retention) fires named high criteria whose
    sentences say how many partitions, files and bytes; the default policy asks two approvals for them."""
    # when
    fired = criteria(spec=spec, data_copy=COPY, partitions_touched=2)

    # then
    assert [c.name for c in fired if c.level == "high"] == names and risk_of(fired) == "high"
    assert all("2 partition(s) (14 file(s), 52,000 bytes)" in c.explanation for c in fired if c.name in names)
    assert words in fired[0].explanation and "168 hour(s)" in fired[1].explanation
    assert approval_requirement(summary(fired)) == (2, ["high risk"])


def test_a_blocked_data_job_is_still_high_risk_and_says_its_data_was_not_listed() -> None:
    """Without a data copy (the plan was blocked before its listing) the criteria still fire, without numbers."""
    # when
    fired = criteria(spec=Relocate(ORDERS, "file:/n"))

    # then
    assert [c.name for c in fired] == ["data_copied", "data_deleted"] and risk_of(fired) == "high"
    assert "not listed: the plan is blocked" in fired[0].explanation


def test_a_sampled_data_copy_says_its_numbers_are_estimates() -> None:
    """A copy listed from a sample of its units gives its files and bytes as ``about``."""
    # when
    fired = criteria(spec=Relocate(ORDERS, "file:/n"), data_copy=replace(COPY, sampled_units=1))

    # then
    assert "about 14 file(s), about 52,000 bytes" in fired[0].explanation


def test_a_broken_view_is_explained_with_the_warnings_own_words() -> None:
    """The views_broken criterion quotes the dependent_views warning (which names the views)."""
    # when
    fired = criteria(warnings=(VIEW_WARNING,))

    # then
    assert [c.as_dict() for c in fired] == [
        {"name": "views_broken", "level": "high", "label": "views broken", "explanation": VIEW_WARNING.message}
    ]


def test_fewer_columns_fire_columns_removed_but_a_renamed_column_does_not() -> None:
    """REPLACE COLUMNS leaving a column out removes it; CHANGE renaming one keeps the count."""
    # given
    fewer = replace(TABLE, columns=(("id", "bigint", None),))
    renamed = replace(TABLE, columns=(("id", "bigint", None), ("total", "double", None)))

    # when
    removed = criteria(after=fewer, columns_changed=True)
    changed = criteria(after=renamed, columns_changed=True)

    # then
    assert [c.name for c in removed] == ["columns_removed", "columns_changed"]
    assert "amount" in removed[0].explanation and risk_of(removed) == "high"
    assert [c.name for c in changed] == ["columns_changed"] and risk_of(changed) == "medium"


def test_the_default_policy_matches_the_criteria_and_names_the_ones_that_fired() -> None:
    """A broken view or a drop asks two approvals; the match names the criteria, not the rule's whole text."""
    # given
    fired = criteria(warnings=(VIEW_WARNING,), drops=2, partitions_touched=2)

    # when
    matches = rule_matches(summary(fired))

    # then
    assert approval_requirement(summary(fired)) == (2, ["high risk"])
    assert [(m.rule, m.approvals, m.criteria) for m in matches] == [
        ("high risk", 2, ("partitions dropped", "views broken"))
    ]


def test_a_configured_rule_matches_on_criteria_names(settings) -> None:
    """A site policy names criteria too: 200,000 statistics rows rewritten ask three approvals here."""
    # given
    settings.CATALOG_APPROVAL_POLICY = {
        "default": 1,
        "rules": [{"name": "big statistics rewrite", "criteria": ["statistics_rewritten"], "approvals": 3}],
    }

    # when
    big = summary(criteria(statistics_moved=200_000))
    small = summary(criteria(statistics_moved=10))

    # then
    assert approval_requirement(big) == (3, ["big statistics rewrite"])
    assert [m.criteria for m in rule_matches(big)] == [("many statistics rewritten",)]
    assert approval_requirement(small) == (1, [])


def test_an_abort_of_transactions_is_high_risk_because_it_cannot_be_reverted() -> None:
    """ABORT TRANSACTIONS fires its own high criterion, and the default policy asks two approvals for it."""
    # when
    fired = criteria(spec=AbortTransactions(TableRef("ops", "job_runs_acid"), txn_ids=(7, 9)))

    # then
    assert [c.name for c in fired] == ["transactions_aborted"] and risk_of(fired) == "high"
    assert "2 open transaction(s)" in fired[0].explanation and "cannot be reverted" in fired[0].explanation
    assert approval_requirement(summary(fired)) == (2, ["high risk"])


def test_a_compaction_request_stays_low_and_says_what_a_major_one_will_rewrite() -> None:
    """A queued compaction changes no table row: a low criterion whose note names a major one's rewrite."""
    # given
    ref = TableRef("ops", "job_runs_acid")

    # when
    major = criteria(spec=CompactTable(ref, compaction_type="major", partition=(("dt", "2024-01-02"),)))
    minor = criteria(spec=CompactTable(ref, compaction_type="minor"))

    # then
    assert [c.name for c in major] == [c.name for c in minor] == ["compaction_requested"]
    assert risk_of(major) == risk_of(minor) == "low"
    assert "rewrites every file of the partition" in major[0].explanation
    assert "merges the table's deltas" in minor[0].explanation
    assert approval_requirement(summary(major)) == (1, [])


def test_the_default_policy_asks_two_approvals_for_every_high_criterion() -> None:
    """The defaults follow the criteria: each high one is in the default high-risk rule, no lower one is."""
    [rule] = DEFAULT_POLICY["rules"]
    assert set(rule["criteria"]) == {name for name, (level, _label) in CRITERIA.items() if level == "high"}
