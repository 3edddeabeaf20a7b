"""
The merge program over Spark Connect: the seeded 2.3 PostgreSQL source merged (renamed, relocated) into a fresh
PostgreSQL target through a real Spark Connect server, whose JVM reads the source through JDBC (Debian's PostgreSQL
driver on its classpath) and whose executors write the copy units with ``mapInArrow`` (the program's code shipped as
artifacts); the imported databases equal the source's. It commits into its own target, so it is not a ``django_db``
test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from operations.merge.execute import merge_execute
from operations.merge.preview import merge_preview
from operations.models import MergeImport
from operations.spark.engine import package_zip
from tests.fixtures.merge import database_dump
from tests.fixtures.spark_connect import ConnectServer
from tests.operations.merge.test_execute import RENAMES, _expected, _request

pytestmark = [pytest.mark.slow]


@pytest.fixture
def connect_session(spark_connect: ConnectServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A Spark Connect session with the project's Spark package as artifacts, as ``operations.spark.entry`` ships it.

    The Spark tests share one process with a classic session, which ``SparkSession.builder.remote`` refuses to sit
    beside: the Connect builder itself makes this one, and the functions module answers for Connect while it runs
    (``SPARK_CONNECT_MODE_ENABLED``, as ``remote()`` sets it in a driver of its own)."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    session = ConnectSession.builder.remote(spark_connect.url).getOrCreate()
    session.addArtifacts(str(package_zip(tmp_path)), pyfile=True)
    yield session
    session.stop()


def test_a_merge_runs_over_spark_connect(merge_target, connect_session) -> None:  # noqa: ANN001
    """Every renamed database's dump equals the source's (locations rewritten by the rule)."""
    # given
    target = merge_target("2.3.0", "pg")
    request = _request("hive23_pg", target)
    events: list[dict] = []

    # when
    merge = merge_execute(request, merge_preview(request), report=events.append, spark=connect_session)

    # then
    assert merge.state == MergeImport.State.PUBLISHED
    for old, new in RENAMES:
        assert database_dump(target, new) == _expected("hive23_pg", request, old)
    assert events[-1]["partitions_done"] == events[-1]["partitions_total"] > 1
