"""
The Spark engine's pure parts: configuration, the driver command for each kind of master, the package zip the
executors import, and reading a progress file and a log while a driver writes them.
"""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path

import pytest

from operations.spark.engine import (
    FILESYSTEM_LAYER,
    DriverFiles,
    ProgressReader,
    SparkEngine,
    driver_command,
    log_tail,
    parse_conf,
    program_exists,
    write_driver_files,
)
from operations.spark.work import WorkDir


def files_for(tmp_path: Path, master: str) -> tuple[SparkEngine, DriverFiles]:
    engine = SparkEngine(master=master, conf={"spark.executor.memory": "2g"})
    files = write_driver_files(
        tmp_path, engine=engine, program="checksum", plan={"directories": []}, app_name="job 7", worker_pid=123
    )
    return engine, files


@pytest.mark.parametrize(
    ("master", "kind"),
    [("local[*]", "local"), ("spark://h:7077", "standalone"), ("yarn", "yarn"), ("k8s://https://h:6443", "kubernetes")],
)
def test_cluster_masters_go_through_spark_submit_in_client_mode(tmp_path: Path, master: str, kind: str) -> None:
    """spark-submit from pyspark's own install, the master, the configuration and the package zip, then entry.py."""
    # given
    engine, files = files_for(tmp_path, master)

    # when
    command = driver_command(engine, files)

    # then
    assert engine.kind == kind
    assert command[0].endswith("pyspark/bin/spark-submit")
    assert command[1:7] == ["--master", master, "--deploy-mode", "client", "--name", "job 7"]
    assert "spark.executor.memory=2g" in command and "spark.ui.showConsoleProgress=false" in command
    assert command[command.index("--py-files") + 1] == str(tmp_path / "catalog_admin_spark.zip")
    assert command[-2:] == [str(Path("operations/spark/entry.py").resolve()), str(tmp_path)]


def test_spark_connect_runs_the_entry_module_with_the_remote_in_its_plan(tmp_path: Path) -> None:
    # given
    engine, files = files_for(tmp_path, "sc://spark.example:15002")

    # when
    command = driver_command(engine, files)

    # then
    assert engine.kind == "connect"
    assert command[1:] == ["-m", "operations.spark.entry", str(tmp_path)]
    spec = json.loads(files.spec.read_text())
    assert (spec["program"], spec["worker_pid"]) == ("checksum", 123)
    assert spec["master"].startswith("sc://spark.example:15002/;session_id=")  # its own session, to interrupt


@pytest.mark.parametrize("master", ["yarn", "k8s://https://h:6443"])
def test_cluster_deploy_mode_ships_the_drivers_input_and_leaves_the_python_to_the_cluster(
    tmp_path: Path, master: str
) -> None:
    """YARN and Kubernetes run the driver on the cluster: ``--deploy-mode cluster``, ``job.json`` shipped with
    ``--files`` and named relative to the driver's working directory, no path of this host's Python."""
    # given
    engine = SparkEngine(master=master, requested_deploy_mode="cluster")
    files = write_driver_files(
        tmp_path, engine=engine, program="checksum", plan={"directories": []}, app_name="job 8", worker_pid=0
    )

    # when
    command = driver_command(engine, files)

    # then
    assert command[1:7] == ["--master", master, "--deploy-mode", "cluster", "--name", "job 8"]
    assert command[command.index("--files") + 1] == str(files.spec)
    assert command[-2:] == [str(Path("operations/spark/entry.py").resolve()), "job.json"]
    assert not any(part.startswith("spark.pyspark.python=") for part in command)
    assert engine.deploy_description == "cluster deploy mode: the driver runs on the cluster"


@pytest.mark.parametrize(
    ("master", "reason"),
    [
        ("spark://h:7077", "a standalone master refuses cluster deploy mode for Python applications"),
        ("local[2]", "local mode runs in the driver's own process"),
        ("sc://h:15002", "Spark Connect runs the work on its server already"),
    ],
)
def test_masters_that_cannot_run_a_python_driver_on_the_cluster_keep_client_mode_and_say_why(
    tmp_path: Path, master: str, reason: str
) -> None:
    # given
    engine = SparkEngine(master=master, requested_deploy_mode="cluster")

    # when
    description = engine.deploy_description

    # then
    assert engine.deploy_mode == "client"
    assert description == f"client deploy mode although cluster was asked for: {reason}"
    if not engine.is_connect:
        files = write_driver_files(
            tmp_path, engine=engine, program="checksum", plan={"directories": []}, app_name="j", worker_pid=1
        )
        command = driver_command(engine, files)
        assert command[command.index("--deploy-mode") + 1] == "client" and "--files" not in command


def test_an_unknown_deploy_mode_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="CATALOG_SPARK_DEPLOY_MODE: 'server' is not one of client, cluster"):
        SparkEngine(master="yarn", requested_deploy_mode="server")


def test_the_package_zip_holds_the_spark_package_and_its_filesystem_layer_and_nothing_of_django(tmp_path: Path) -> None:
    """What a cluster's executors import from the project is all in the zip (a cluster has no checkout), and none of
    it imports Django when loaded."""
    # given / when
    files_for(tmp_path, "local[2]")

    # then
    archive = zipfile.ZipFile(tmp_path / "catalog_admin_spark.zip")
    names = set(archive.namelist())
    assert {"operations/__init__.py", "operations/spark/entry.py", "operations/spark/programs/relocate.py"} <= names
    assert names - {"operations/__init__.py"} - set(FILESYSTEM_LAYER) == {
        path.as_posix() for path in Path("operations/spark").rglob("*.py")
    }
    assert not [name for name in names if _module_level_imports(archive.read(name)) & {"django", "rest_framework"}]
    shipped = {name.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for name in names}
    imported = set().union(*(_project_imports(archive.read(name)) for name in names))
    assert imported <= shipped, imported - shipped


def _module_level_imports(source: bytes) -> set[str]:
    """The top-level packages a module imports when loaded (not inside functions)."""
    found: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def _project_imports(source: bytes) -> set[str]:
    """The project modules a module imports anywhere (``catalog_admin…``, ``operations…``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        found |= {n for n in names if n.split(".")[0] in ("catalog_admin", "operations")}
    return found


def test_configuration_pairs_are_parsed_and_a_bad_one_is_named() -> None:
    assert parse_conf("a=1 b=x=y,c=3\n") == {"a": "1", "b": "x=y", "c": "3"}
    assert parse_conf("") == {}
    with pytest.raises(ValueError, match="CATALOG_SPARK_CONF: oops is not key=value"):
        parse_conf("a=1 oops")


def test_only_shipped_programs_with_plain_names_exist() -> None:
    assert program_exists("checksum")
    assert not program_exists("nope")
    assert not program_exists("../entry")
    assert not program_exists("__init__")


def test_the_progress_reader_returns_whole_lines_once(tmp_path: Path) -> None:
    """A line the driver is still writing is left for the next read; nothing is read twice."""
    # given
    path = tmp_path / "progress.jsonl"
    reader = ProgressReader(WorkDir(str(tmp_path)))
    assert list(reader.read()) == []  # no file yet
    path.write_text('{"files_done": 1}\n{"files_do')

    # when
    first = list(reader.read())
    with path.open("a") as stream:
        stream.write('ne": 2}\n{"unit_done": "a"}\n')
    second = list(reader.read())

    # then
    assert first == [{"files_done": 1}]
    assert second == [{"files_done": 2}, {"unit_done": "a"}]
    assert list(reader.read()) == []


def test_the_log_tail_is_the_last_lines(tmp_path: Path) -> None:
    path = tmp_path / "driver.log"
    assert log_tail(path) == ""
    path.write_text("".join(f"line {n}\n" for n in range(100)))
    assert log_tail(path, lines=3) == "line 97\nline 98\nline 99"
