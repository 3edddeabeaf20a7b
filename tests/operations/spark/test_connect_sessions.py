"""
A job's Spark Connect session is named in its driver's URL, so that whoever stops the driver interrupts what the
session runs on the server (``operations.spark.connect_sessions``): a real Spark Connect server goes on running a
client's operation until it is interrupted from another client of the same session.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from operations.spark.connect_sessions import interrupt_session, new_session_id, session_of, with_session
from operations.spark.engine import SparkEngine, write_driver_files
from tests.fixtures.spark_connect import ConnectServer

SESSION = "4f1f6a0e-5c7e-4b55-9a51-0e0c6a6bd5a1"

# A client whose one operation sleeps in the server's Python workers far longer than the test waits.
# (Measured on the real server: killed, its Spark job still ran 30 s later; interrupted, it was gone within 5 s.)
SLOW_CLIENT = """
import sys
from pyspark.sql import SparkSession

def slow(batches):
    import time
    for batch in batches:
        time.sleep(600)
        yield batch

spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
print("connected", flush=True)
try:
    spark.range(2, numPartitions=2).mapInArrow(slow, "id long").collect()
    print("finished", flush=True)
except Exception as exc:
    print("interrupted", type(exc).__name__, flush=True)
"""


@pytest.mark.parametrize(
    ("master", "named"),
    [
        ("sc://127.0.0.1:15002", f"sc://127.0.0.1:15002/;session_id={SESSION}"),
        ("sc://host:1/;token=abc", f"sc://host:1/;token=abc;session_id={SESSION}"),
        ("sc://host:1/;session_id=old;user_id=me", f"sc://host:1/;user_id=me;session_id={SESSION}"),
    ],
)
def test_a_session_is_named_in_the_url_beside_its_other_parameters(master: str, named: str) -> None:
    assert with_session(master, SESSION) == named
    assert session_of(named) == SESSION
    assert session_of(master.replace("session_id=old;", "")) is None


def test_only_a_connect_driver_names_a_session(tmp_path: Path) -> None:
    # given
    connect = SparkEngine(master="sc://127.0.0.1:15002")
    local = SparkEngine(master="local[1]")
    # when
    named = write_driver_files(tmp_path / "c", engine=connect, program="checksum", plan={}, app_name="t", worker_pid=1)
    plain = write_driver_files(tmp_path / "l", engine=local, program="checksum", plan={}, app_name="t", worker_pid=1)
    # then
    first = json.loads(named.spec.read_text())["master"]
    assert session_of(first) is not None
    assert json.loads(plain.spec.read_text())["master"] == "local[1]"
    again = write_driver_files(tmp_path / "d", engine=connect, program="checksum", plan={}, app_name="t", worker_pid=1)
    assert session_of(json.loads(again.spec.read_text())["master"]) != session_of(first)  # one session per driver


def _running_jobs(server: ConnectServer) -> int:
    """The Spark jobs the Connect server's application runs now (its UI's REST API)."""
    with urllib.request.urlopen(f"{server.ui}/api/v1/applications", timeout=10) as answer:
        application = json.load(answer)[0]["id"]
    with urllib.request.urlopen(f"{server.ui}/api/v1/applications/{application}/jobs?status=running", timeout=10) as a:
        return len(json.load(a))


def _wait_for(condition, seconds: float) -> bool:  # noqa: ANN001 - a predicate
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(1)
    return True


@pytest.mark.slow
def test_a_killed_clients_operation_runs_on_until_its_session_is_interrupted(spark_connect: ConnectServer) -> None:
    """What stopping a Connect driver used to be (its client killed) leaves its operation running on the server,
    sleeping for ten minutes; interrupting the session from another client ends it."""
    # given
    url = with_session(spark_connect.url, new_session_id())
    client = subprocess.Popen(
        [sys.executable, "-c", SLOW_CLIENT, url], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert client.stdout is not None and client.stdout.readline().strip() == "connected"
        assert _wait_for(lambda: _running_jobs(spark_connect) == 1, 120), "the operation never started"
        client.kill()
        client.wait()
        time.sleep(5)
        assert _running_jobs(spark_connect) == 1  # the client is gone, its operation is not
        # when
        interrupted = interrupt_session(url)
        # then
        assert interrupted
        assert _wait_for(lambda: _running_jobs(spark_connect) == 0, 60), "the operation went on running"
    finally:
        client.kill()
        client.wait()
