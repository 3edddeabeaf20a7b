"""
A cluster-mode driver's credentials: YARN and Kubernetes set the environment of a driver they run from Spark
settings, which reach ``spark-submit`` in an in-memory properties file, never its command line, its environment (the
driver does not run here), a file or the log. The cluster managers cannot run here, so ``spark-submit`` is replaced
by a stand-in that records what it was given; a real ``spark-submit`` reads such a file back exactly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from operations.spark import engine as spark_engine
from operations.spark.driver_secrets import cluster_driver_environment, java_properties, memory_file
from operations.spark.engine import SparkEngine, driver_secret_settings, launch_driver, write_driver_files

SECRETS = {"CATALOG_MERGE_SOURCE_PASSWORD": "pw=s:1", "CATALOG_JOB_S3_SECRET": "abc/def+ghi"}
STAND_IN = """#!/bin/bash
out="$(dirname "$0")"
printf '%s\\n' "$@" > "$out/argv"
env > "$out/environ"
for ((i = 1; i <= $#; i++)); do
  if [ "${!i}" = --properties-file ]; then
    j=$((i + 1)); cat "${!j}" > "$out/properties"; readlink "${!j}" > "$out/properties_link"
  fi
done
"""


@pytest.mark.parametrize(
    ("master", "prefix"),
    [("yarn", "spark.yarn.appMasterEnv."), ("k8s://https://h:6443", "spark.kubernetes.driverEnv.")],
)
def test_a_cluster_mode_driver_gets_its_credentials_from_the_cluster_manager_through_memory_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, master: str, prefix: str
) -> None:
    # given: spark-submit replaced by a stand-in recording its arguments, environment and properties file
    stand_in = _stand_in(tmp_path, monkeypatch)
    engine = SparkEngine(master=master, requested_deploy_mode="cluster")
    files = write_driver_files(
        tmp_path / "launch", engine=engine, program="merge", plan={}, app_name="job 9", worker_pid=0
    )

    # when
    assert launch_driver(engine, files, SECRETS).wait(timeout=30) == 0

    # then: the settings from a memory file, the cluster's defaults still loaded
    argv = (stand_in.parent / "argv").read_text().splitlines()
    settings_path = argv[argv.index("--properties-file") + 1]
    assert settings_path.startswith("/dev/fd/") and "--load-spark-defaults" in argv
    assert (stand_in.parent / "properties_link").read_text().startswith("/memfd:catalog-admin-driver-settings")
    properties = (stand_in.parent / "properties").read_bytes()
    assert properties == java_properties({f"{prefix}{name}": value for name, value in SECRETS.items()})
    # nowhere else: not the command line, not spark-submit's environment, not the launch directory
    recorded = "\n".join(argv) + (stand_in.parent / "environ").read_text()
    launched = b"".join(path.read_bytes() for path in files.directory.rglob("*") if path.is_file())
    for secret in SECRETS.values():
        assert secret not in recorded
        assert secret.encode() not in launched
    assert not [target for target in _open_files() if "catalog-admin-driver-settings" in target]  # none kept open


def test_a_credential_that_cannot_reach_the_cluster_starts_no_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given
    stand_in = _stand_in(tmp_path, monkeypatch)
    engine = SparkEngine(master="yarn", requested_deploy_mode="cluster")
    files = write_driver_files(tmp_path / "launch", engine=engine, program="merge", plan={}, app_name="j", worker_pid=0)

    # when / then
    with pytest.raises(ValueError, match="CATALOG_JOB_S3_SECRET: the value begins or ends with a blank"):
        launch_driver(engine, files, {"CATALOG_JOB_S3_SECRET": "trailing "})
    assert not (stand_in.parent / "argv").exists()


def test_a_driver_that_runs_here_inherits_its_credentials_and_needs_no_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: YARN in client deploy mode, and a standalone master that keeps the driver here even when asked not to
    stand_in = _stand_in(tmp_path, monkeypatch)
    engines = (SparkEngine(master="yarn"), SparkEngine(master="spark://h:7077", requested_deploy_mode="cluster"))
    assert all(driver_secret_settings(engine, SECRETS) == {} for engine in engines)
    files = write_driver_files(
        tmp_path / "launch", engine=engines[0], program="merge", plan={}, app_name="j", worker_pid=1
    )

    # when
    assert launch_driver(engines[0], files, SECRETS).wait(timeout=30) == 0

    # then: in spark-submit's (the driver's) environment, no settings file
    environment = (stand_in.parent / "environ").read_text().splitlines()
    assert all(f"{name}={value}" in environment for name, value in SECRETS.items())
    assert "--properties-file" not in (stand_in.parent / "argv").read_text().splitlines()


def test_a_variable_the_operator_sets_for_the_driver_is_left_to_the_operator() -> None:
    """A Kubernetes secret named in ``CATALOG_SPARK_CONF`` (or the operator's own driver environment) wins."""
    conf = {
        "spark.kubernetes.driver.secretKeyRef.CATALOG_JOB_S3_SECRET": "s3-credentials:secret",
        "spark.kubernetes.driverEnv.CATALOG_MERGE_TARGET_PASSWORD": "set-by-the-operator",
    }
    secrets = {**SECRETS, "CATALOG_MERGE_TARGET_PASSWORD": "pw2"}

    settings = cluster_driver_environment("kubernetes", conf, secrets)

    assert settings == {"spark.kubernetes.driverEnv.CATALOG_MERGE_SOURCE_PASSWORD": "pw=s:1"}


def test_a_credential_spark_would_trim_is_refused_naming_its_variable_not_its_value() -> None:
    with pytest.raises(ValueError, match=r"^spark.yarn.appMasterEnv.CATALOG_JOB_S3_SECRET: the value begins or ends"):
        java_properties({"spark.yarn.appMasterEnv.CATALOG_JOB_S3_SECRET": "s3cr3t "})
    with pytest.raises(ValueError) as refused:
        java_properties({"spark.yarn.appMasterEnv.CATALOG_MERGE_SOURCE_PASSWORD": "\tpw"})
    assert "pw" not in str(refused.value).replace("PASSWORD", "")


@pytest.mark.slow
def test_spark_submit_reads_the_memory_file_back_exactly_beside_the_clusters_defaults(tmp_path: Path) -> None:
    """A real ``spark-submit`` (local master) reads the in-memory file through ``/dev/fd``: every escaped character
    arrives as it was, and ``spark-defaults.conf`` still applies."""
    # given: values Java's properties format escapes, and a defaults file
    values = {
        "spark.catalog_admin.escapes": "a b=1:2#3!4\\5\t6\n7",
        "spark.catalog_admin.unicode": "päss→🔑",
        "spark.catalog_admin.empty": "",
    }
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text("spark.catalog_admin.default  from-defaults\n")
    app = tmp_path / "app.py"
    app.write_text(
        "import json, sys\nfrom pyspark.sql import SparkSession\n"
        "conf = SparkSession.builder.getOrCreate().sparkContext.getConf()\n"
        "print('CONF=' + json.dumps({k: v for k, v in conf.getAll() if k.startswith('spark.catalog_admin.')}))\n"
    )
    descriptor = memory_file(java_properties(values))
    environment = {
        **os.environ, "SPARK_CONF_DIR": str(tmp_path / "conf"),
        "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
    }  # fmt: skip

    # when
    try:
        command = [spark_engine._spark_submit(), "--master", "local[1]", "--properties-file",
                   f"/dev/fd/{descriptor}", "--load-spark-defaults", str(app)]  # fmt: skip
        done = subprocess.run(command, pass_fds=(descriptor,), env=environment, capture_output=True, text=True)
    finally:
        os.close(descriptor)

    # then
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("CONF="))
    assert json.loads(line.removeprefix("CONF=")) == {**values, "spark.catalog_admin.default": "from-defaults"}


def _open_files() -> list[str]:
    """What this process's descriptors point at."""
    targets = []
    for descriptor in os.listdir("/proc/self/fd"):
        try:
            targets.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        except FileNotFoundError:  # the listing's own descriptor, closed since
            continue
    return targets


def _stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``spark-submit`` replaced by :data:`STAND_IN`, which records what it gets beside itself."""
    stand_in = tmp_path / "bin" / "spark-submit"
    stand_in.parent.mkdir()
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    monkeypatch.setattr(spark_engine, "_spark_submit", lambda: str(stand_in))
    return stand_in
