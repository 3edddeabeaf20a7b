"""
``build_preview`` (``operations/planners/common.py``): the criteria and risk a real plan derives from its parts. Data
jobs (relocation, CONCATENATE, SET FILEFORMAT … WITH DATA) fire named high criteria from their data copy, so the
default policy asks them the same two approvals as a rename.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from catalog_admin.selectors.metastores import Metastore
from operations.policy import approval_requirement
from operations.services.alter import alter_preview_statement
from tests.fixtures.operations import location_of

pytestmark = pytest.mark.usefixtures("warehouse")


@pytest.mark.parametrize(
    ("statement", "fired"),
    [
        pytest.param(
            "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{root}/orders_moved' WITH DATA",
            ["data_copied", "data_deleted"],
            id="relocate",
        ),
        pytest.param(
            "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE",
            ["data_rewritten", "data_deleted"],
            id="concatenate",
        ),
        pytest.param(
            "ALTER TABLE sales.orders PARTITION (dt='2024-01-03', hour=0) SET FILEFORMAT ORC WITH DATA",
            ["data_rewritten", "data_deleted"],
            id="convert",
        ),
    ],
)
def test_a_data_job_names_what_it_copies_rewrites_and_deletes_and_asks_two_approvals(
    metastore: Metastore, warehouse: Path, statement: str, fired: list[str]
) -> None:
    """The preview's high criteria are named for the data job, say how many files and bytes from its data copy, and
    the default policy's high-risk rule asks two approvals (as for a rename), in the API's summary too."""
    # given: two files in each day partition, so that CONCATENATE has something to merge
    root = location_of(warehouse / "sales.db")
    for data in [p for p in (warehouse / "sales.db" / "orders").glob("dt=2024-01-02/*/*") if p.is_file()]:
        shutil.copy(data, data.with_name(data.name + "_copy"))

    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement.format(root=root))

    # then
    assert preview.blockers == ()
    summary = preview.as_dict()
    high = [c for c in summary["criteria"] if c["level"] == "high"]
    assert [c["name"] for c in high] == fired and summary["risk"] == "high"
    amount = f"{preview.data_copy.files:,} file(s), {preview.data_copy.bytes:,} bytes"
    assert all(amount in c["explanation"] for c in high)
    assert approval_requirement(summary) == (2, ["high risk"])
