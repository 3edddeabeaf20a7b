"""
Where and how Spark programs run: the engine's configuration, and launching, following and stopping a driver.

``CATALOG_SPARK_MASTER`` says where: ``local[*]`` (the embedded default: Spark inside the driver process),
``spark://host:port`` (standalone), ``yarn`` or ``k8s://https://host:port`` — all through ``spark-submit`` from
pyspark's own install, in client deploy mode (the driver runs here as a child of the worker) unless
``CATALOG_SPARK_DEPLOY_MODE=cluster`` asks YARN or Kubernetes to run it on the cluster (a standalone master refuses
that for Python, so it keeps client mode and the job log says why) — or ``sc://host:port`` (Spark Connect:
``python -m operations.spark.entry``, the work runs on the server). ``CATALOG_SPARK_CONF`` adds ``key=value``
settings (executor memory, YARN queue, Kubernetes image …). Progress and the manifest go to the job's work location
(``operations.spark.work``), which an object store or HDFS may hold, so the driver need not share a disk with us.

A driver runs in a process group of its own: stopping it (cancel) ends the group (``spark-submit``'s JVM and the
Python driver), which ends the application on the cluster too, since a client-mode application lives as long as its
driver; a cluster-mode driver finds the cancel request in its work location and ends itself. A worker that did not
launch a driver (it adopted it from a stopping worker) follows and stops it by its process group id and launch
directory (:func:`driver_alive`, :func:`stop_driver_group`). Programs, this package and the filesystem layer they use
reach the executors as a zip (``--py-files``; through Spark Connect, as artifacts), so a cluster's Python needs only
the project's requirements, not its checkout.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from operations.spark.connect_sessions import interrupt_session, new_session_id, with_session
from operations.spark.driver_secrets import DRIVER_ENVIRONMENT, cluster_driver_environment, java_properties, memory_file
from operations.spark.entry import SPEC_FILE, process_alive
from operations.spark.work import MANIFEST_FILE, PROGRESS_FILE, ProgressReader, WorkDir

__all__ = (
    "FILESYSTEM_LAYER",
    "DriverFiles",
    "ProgressReader",
    "SparkEngine",
    "driver_alive",
    "driver_command",
    "driver_secret_settings",
    "interrupt_connect_operations",
    "kill_application",
    "launch_driver",
    "log_tail",
    "package_zip",
    "parse_conf",
    "program_exists",
    "python_conf",
    "read_manifest",
    "stop_driver",
    "stop_driver_group",
    "write_driver_files",
)

PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent  # the project root, holding operations/
# The Django-free layer the programs import: catalog_admin.locations and what it imports at module level, and the
# view-text rewrite of the merge (catalog_admin.hive.view_text) and the SequenceFile reader of the rewrite.
FILESYSTEM_LAYER = (
    "catalog_admin/__init__.py",
    "catalog_admin/filesystem_options.py",
    "catalog_admin/hive/__init__.py",
    "catalog_admin/hive/acid.py",
    "catalog_admin/hive/locations.py",
    "catalog_admin/hive/sequence_file.py",
    "catalog_admin/hive/text_format.py",
    "catalog_admin/hive/view_text.py",
    "catalog_admin/locations.py",
    "catalog_admin/object_stores.py",
)
DEPLOY_MODES = ("client", "cluster")
CLUSTER_MODE_KINDS = ("yarn", "kubernetes")
# Why a master keeps the driver here when cluster deploy mode is asked for.
CLIENT_ONLY = {
    "standalone": "a standalone master refuses cluster deploy mode for Python applications",
    "local": "local mode runs in the driver's own process",
    "connect": "Spark Connect runs the work on its server already",
}
PROGRAM_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
LOG_FILE = "driver.log"
# Quiet, predictable drivers: no console progress bars in the log; a UI port found by Spark when 4040 is taken.
DEFAULT_CONF = {"spark.ui.showConsoleProgress": "false"}
# The hidden field of a standalone master page's kill form (Spark 4.3 checks it on every state-changing request).
CSRF_INPUT = re.compile(
    r'<input[^>]*name="csrfToken"[^>]*value="([^"]+)"|<input[^>]*value="([^"]+)"[^>]*name="csrfToken"'
)


@dataclass(frozen=True)
class SparkEngine:
    """Where Spark runs: a master URL and extra configuration."""

    master: str = "local[*]"
    conf: dict[str, str] = field(default_factory=dict)
    # A standalone master's web UI (http://host:8080): cancel also kills the application there; for Spark Connect,
    # the server's UI, which the job page links.
    master_ui: str = ""
    requested_deploy_mode: str = "client"  # CATALOG_SPARK_DEPLOY_MODE

    def __post_init__(self) -> None:
        if self.requested_deploy_mode not in DEPLOY_MODES:
            raise ValueError(
                f"CATALOG_SPARK_DEPLOY_MODE: {self.requested_deploy_mode!r} is not one of {', '.join(DEPLOY_MODES)}"
            )

    @property
    def is_connect(self) -> bool:
        return self.master.startswith("sc://")

    @property
    def deploy_mode(self) -> str:
        """``cluster`` when asked for and the master runs Python drivers on the cluster (YARN, Kubernetes)."""
        return "cluster" if self.requested_deploy_mode == "cluster" and self.kind in CLUSTER_MODE_KINDS else "client"

    @property
    def driver_on_cluster(self) -> bool:
        """Whether the cluster manager starts the driver (and sets its environment): cluster deploy mode."""
        return self.deploy_mode == "cluster" and self.kind in DRIVER_ENVIRONMENT

    @property
    def deploy_description(self) -> str:
        """How the driver runs, for the job log (with the reason when cluster mode was asked for and not used)."""
        if self.deploy_mode == "cluster":
            return "cluster deploy mode: the driver runs on the cluster"
        if self.requested_deploy_mode != "cluster":
            return "the driver runs here" if not self.is_connect else "the work runs on the Connect server"
        reason = CLIENT_ONLY.get(self.kind, "it is not a cluster manager")
        return f"client deploy mode although cluster was asked for: {reason}"

    @property
    def kind(self) -> str:
        """local, standalone, yarn, kubernetes or connect."""
        for prefix, kind in (
            ("local", "local"),
            ("spark://", "standalone"),
            ("yarn", "yarn"),
            ("k8s://", "kubernetes"),
        ):
            if self.master.startswith(prefix):
                return kind
        return "connect" if self.is_connect else "other"


@dataclass(frozen=True)
class DriverFiles:
    """A driver's local launch directory (its input ``job.json``, the package zip, its log) and its work location
    (progress and manifest: by default the same directory; or an object-store/HDFS prefix)."""

    directory: Path
    work_dir: WorkDir | None = None

    @property
    def work(self) -> WorkDir:
        return self.work_dir or WorkDir(str(self.directory))

    @property
    def spec(self) -> Path:
        return self.directory / SPEC_FILE

    @property
    def progress(self) -> Path:
        """The progress file of a local work location."""
        return self.work.path / PROGRESS_FILE

    @property
    def manifest(self) -> Path:
        """The manifest of a local work location."""
        return self.work.path / MANIFEST_FILE

    @property
    def log(self) -> Path:
        return self.directory / LOG_FILE


def parse_conf(text: str) -> dict[str, str]:
    """``"a=1 b=2"`` or ``"a=1,b=2"`` -> ``{"a": "1", "b": "2"}``; a pair without ``=`` is refused."""
    pairs = [item for item in re.split(r"[\s,]+", text.strip()) if item]
    bad = [item for item in pairs if "=" not in item]
    if bad:
        raise ValueError(f"CATALOG_SPARK_CONF: {', '.join(bad)} is not key=value")
    return dict(item.split("=", 1) for item in pairs)


def program_exists(name: str) -> bool:
    """Whether ``operations/spark/programs/<name>.py`` is a program this console ships."""
    return bool(PROGRAM_NAME.match(name)) and (Path(__file__).parent / "programs" / f"{name}.py").is_file()


def package_zip(directory: Path) -> Path:
    """``operations/__init__.py``, ``operations/spark/`` and the :data:`FILESYSTEM_LAYER` as a zip for the driver's
    and executors' Python path."""
    target = directory / "catalog_admin_spark.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ("operations/__init__.py", *FILESYSTEM_LAYER):
            archive.write(PACKAGE_ROOT / name, name)
        for path in sorted((PACKAGE_ROOT / "operations" / "spark").rglob("*.py")):
            archive.write(path, path.relative_to(PACKAGE_ROOT).as_posix())
    return target


def write_driver_files(
    directory: Path,
    *,
    engine: SparkEngine,
    program: str,
    plan: dict[str, Any],
    app_name: str,
    worker_pid: int,
    work: WorkDir | None = None,
    host: str = "",
) -> DriverFiles:
    """A fresh launch directory with the driver's ``job.json`` and the package zip, and a fresh work location."""
    directory.mkdir(parents=True, exist_ok=True)
    files = DriverFiles(directory, work)
    files.log.unlink(missing_ok=True)
    files.work.prepare()
    spec = {
        "program": program,
        "plan": plan,
        "master": with_session(engine.master, new_session_id()) if engine.is_connect else engine.master,
        "conf": {**({} if engine.is_connect else DEFAULT_CONF), **python_conf(engine), **engine.conf},
        "ui_url": engine.master_ui if engine.is_connect else "",  # a Connect server's UI, not known to its clients
        "app_name": app_name,
        "worker_pid": worker_pid,
        "host": host,  # the launching worker's host name: a follower record naming another is not watched here
        "work": files.work.location,
        "filesystems": files.work.options,  # plain options; credentials come from the driver's environment
        "py_files": [str(package_zip(directory))],
    }
    files.spec.write_text(json.dumps(spec, default=str))
    return files


def python_conf(engine: SparkEngine) -> dict[str, str]:
    """The driver's and executors' Python: this one (the venv's, which has fsspec and the project's packages) unless
    ``CATALOG_SPARK_CONF`` names another (nodes with their own). Spark Connect runs none of ours; in cluster deploy
    mode the cluster's nodes have their own (``CATALOG_SPARK_CONF`` names it, e.g. ``spark.pyspark.python``)."""
    if engine.is_connect or engine.deploy_mode == "cluster":
        return {}
    return {"spark.pyspark.python": sys.executable, "spark.pyspark.driver.python": sys.executable}


def driver_command(engine: SparkEngine, files: DriverFiles, secret_settings: int | None = None) -> list[str]:
    """The command that starts the driver for ``files``; ``secret_settings``: the descriptor of an in-memory
    properties file of settings that must not show in the command line (a cluster-mode driver's credentials)."""
    if engine.is_connect:
        return [sys.executable, "-m", "operations.spark.entry", str(files.directory)]
    spec = json.loads(files.spec.read_text())
    mode = engine.deploy_mode
    command = [_spark_submit(), "--master", engine.master, "--deploy-mode", mode, "--name", spec["app_name"]]
    for key, value in spec["conf"].items():
        command += ["--conf", f"{key}={value}"]
    if secret_settings is not None:  # the cluster's spark-defaults.conf still applies
        command += ["--properties-file", f"/dev/fd/{secret_settings}", "--load-spark-defaults"]
    command += ["--py-files", ",".join(spec["py_files"])]
    if mode == "cluster":  # the driver's container gets job.json in its working directory
        command += ["--files", str(files.spec)]
    entry = str(Path(__file__).with_name("entry.py"))
    return [*command, entry, SPEC_FILE if mode == "cluster" else str(files.directory)]


def launch_driver(
    engine: SparkEngine, files: DriverFiles, secrets: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start the driver in a process group of its own, its output going to the log file; ``secrets`` (credentials)
    reach it in its environment only, never in a file or the command line: a driver here inherits them, one on the
    cluster gets them through the cluster manager (:func:`driver_secret_settings`)."""
    python = {**python_conf(engine), **engine.conf}
    on_cluster = driver_secret_settings(engine, secrets or {})
    environment = {
        **os.environ,
        **({} if engine.driver_on_cluster else secrets or {}),
        "PYSPARK_PYTHON": python.get("spark.pyspark.python", sys.executable),
        "PYSPARK_DRIVER_PYTHON": python.get("spark.pyspark.driver.python", sys.executable),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])),
    }
    settings = memory_file(java_properties(on_cluster)) if on_cluster else None
    try:
        with files.log.open("ab") as log:
            return subprocess.Popen(
                driver_command(engine, files, settings),
                cwd=PACKAGE_ROOT,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=() if settings is None else (settings,),
            )
    finally:
        if settings is not None:
            os.close(settings)  # spark-submit holds its own


def driver_secret_settings(engine: SparkEngine, secrets: dict[str, str]) -> dict[str, str]:
    """The settings giving a cluster-mode driver ``secrets`` as its environment (YARN's application master
    environment, Kubernetes' driver environment), but for a variable ``CATALOG_SPARK_CONF`` sets for it; none for a
    driver that runs here."""
    if not engine.driver_on_cluster:
        return {}
    return cluster_driver_environment(engine.kind, engine.conf, secrets)


def interrupt_connect_operations(files: DriverFiles) -> bool:
    """Interrupt what the Spark Connect session of the driver of ``files`` runs on its server (its ``job.json``
    names the session): whether the server confirmed it. False for a driver of another engine."""
    try:
        master = str(json.loads(files.spec.read_text()).get("master", ""))
    except (OSError, ValueError):
        return False
    return interrupt_session(master)


def stop_driver(process: subprocess.Popen[bytes], *, grace_seconds: float = 10.0) -> int:
    """End the driver's process group: SIGTERM, then SIGKILL after ``grace_seconds``; returns its exit code."""
    for sig, wait in ((signal.SIGTERM, grace_seconds), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            return process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    return process.wait()


def driver_alive(pid: int, directory: Path) -> bool:
    """Whether the driver launched for ``directory`` still runs as process (group leader) ``pid`` on this host: alive,
    and its command line names the launch directory (a reused pid is not the driver)."""
    if not pid or not process_alive(pid):
        return False
    try:
        arguments = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: the pid alone
        return True
    return str(directory).encode() in arguments


def stop_driver_group(pid: int, directory: Path, *, grace_seconds: float = 10.0) -> bool:
    """End the process group of a driver this process did not launch (an adopted one): SIGTERM, then SIGKILL after
    ``grace_seconds``, waiting until it is gone; whether it was running."""
    if not driver_alive(pid, directory):
        return False
    for sig, wait in ((signal.SIGTERM, grace_seconds), (signal.SIGKILL, 60.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not process_alive(pid):
                return True
            time.sleep(0.2)
    return True


def kill_application(engine: SparkEngine, app_id: str, *, timeout: float = 10.0) -> bool:
    """Ask a standalone master to kill ``app_id`` as its web UI's kill link does (``spark.ui.killEnabled``; the form
    carries the page's CSRF token); whether the master took the request. Nothing to do for other masters: a
    client-mode application ends with its driver."""
    if engine.kind != "standalone" or not engine.master_ui or not app_id:
        return False
    root = engine.master_ui.rstrip("/")
    try:
        with urllib.request.urlopen(f"{root}/", timeout=timeout) as page:
            token = CSRF_INPUT.search(page.read().decode("utf-8", errors="replace"))
        fields = {
            "id": app_id,
            "terminate": "true",
            **({"csrfToken": token.group(1) or token.group(2)} if token else {}),
        }
        request = urllib.request.Request(f"{root}/app/kill/", data=urllib.parse.urlencode(fields).encode())
        with urllib.request.urlopen(request, timeout=timeout):
            return True
    except OSError:
        return False


def log_tail(path: Path, lines: int = 40, max_bytes: int = 64 * 1024) -> str:
    """The last ``lines`` lines of a log file (read from its last ``max_bytes``)."""
    if not path.exists():
        return ""
    with path.open("rb") as stream:
        stream.seek(max(path.stat().st_size - max_bytes, 0))
        text = stream.read().decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def read_manifest(files: DriverFiles) -> dict[str, Any] | None:
    """The program's result manifest, or None when it wrote none (it failed or was stopped)."""
    return files.work.read_manifest()


def _spark_submit() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / "spark-submit")
