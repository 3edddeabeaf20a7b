"""
A compaction end to end on the Spark engine (local[2], a real ``spark-submit`` driver): ``hive_ddl --execute`` of
CONCATENATE runs the rewrite program as a job to its end, printing its progress, and exits only once every
partition's rows were verified and the metastore swapped. Jobs run eagerly (as in ``test_relocate_jobs_spark.py``).
"""

from __future__ import annotations

import io

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobState
from operations.models import Execution, Job, Relocation
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import path_of
from tests.operations.services.test_rewrite import DAY, ORDERS, parquet_rows, split_into_small_files

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db,
    pytest.mark.usefixtures("eager_jobs", "local_spark", "warehouse"),
    pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True),  # one Spark run is enough
]


@pytest.fixture
def local_spark(settings) -> None:  # noqa: ANN001
    settings.CATALOG_SPARK_MASTER = "local[2]"


def test_hive_ddl_executes_a_concatenate_on_spark_printing_its_progress(metastore: Metastore) -> None:
    """The job rewrites each partition with small files into one file holding the same rows, verified, and swaps."""
    # given
    chosen = split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    before = {n: parquet_rows(path_of(loc)) for n, loc in chosen.items() if len(list(path_of(loc).iterdir())) > 1}
    out = io.StringIO()

    # when
    call_command(
        "hive_ddl", "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE",
        metastore=metastore.name, execute=True, reason="small files", actor="ops", stdout=out,
    )  # fmt: skip

    # then
    printed = out.getvalue()
    job = Job.objects.get(kind="compact")
    assert (job.state, job.program) == (JobState.SUCCEEDED, "rewrite"), job.error
    assert f"Rewrite job #{job.pk}" in printed and "Driver started on local[2]" in printed
    assert f"Rewritten, verified and swapped as execution #{job.result['execution']}" in printed
    now = partition_locations(metastore, table_row(metastore, "sales", "orders").id)
    execution = Execution.objects.get(pk=job.result["execution"])
    trash = {unit["key"]: unit["source"] for unit in Relocation.objects.get(execution=execution).units}
    for name, rows in before.items():
        new = path_of(now[name])
        files = [p for p in new.iterdir() if not p.name.startswith(("_", "."))]
        assert now[name] == chosen[name] and len(files) == 1, "the new files are home"
        assert sorted(tuple(r.values()) for r in pq.read_table(files[0]).to_pylist()) == rows
        assert parquet_rows(path_of(trash[name])) == rows, "the old files are kept in the trash"
    assert (execution.source, execution.actor, execution.reason) == ("cli", "ops", "small files")
    assert Relocation.objects.get(execution=execution).state == Relocation.State.SWAPPED
