"""
A Spark job attempt's work location: where its driver writes progress and the manifest, and where a cancel request
waits for it. The console and the driver both reach it through the project's filesystem layer
(``catalog_admin.locations``), so it need not be a disk they share.

A local directory (``/var/…`` or ``file:``) keeps ``progress.jsonl``, appended one JSON line an event, and
``manifest.json``, written whole then renamed. On an object store (``s3a://bucket/prefix``) or HDFS nothing is
appended: each event is an object of its own (``progress/00000001.json``, numbered in order), read back by listing the
prefix, and the manifest is one object, visible whole once written. ``cancel`` is an object (or file) the console
writes to ask a driver it cannot signal (cluster deploy mode) to stop. ``follower`` names the worker following the
driver now (host and pid), written when a stopping worker hands the driver over (pid 0: a successor will adopt it,
with the hand-over's token, which a successor on another host reads back to prove it reaches the same location) and
when a successor adopts it, so the driver's watchdog follows its new worker. ``ended`` is the driver's own exit
marker (``succeeded`` after the manifest, ``failed`` after its Spark session stopped, ``stopped`` once its watchdog
ended the rest of its process group): a worker that cannot see the driver's process (another host, cluster deploy
mode) takes it as the proof that the driver writes nothing more. A driver killed -9 writes none. ``alive`` is the
driver's beat, and a follower on another host renews a lease in its ``follower`` record (``operations.spark.lease``).
Credentials are never written here: the filesystem options are plain JSON, the keys come from each process's
environment.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from catalog_admin.locations import FileSystem, filesystem_for

__all__ = (
    "ALIVE_FILE",
    "CANCEL_FILE",
    "ENDED_FILE",
    "FOLLOWER_FILE",
    "MANIFEST_FILE",
    "PROGRESS_FILE",
    "PROGRESS_PREFIX",
    "ProgressReader",
    "WorkDir",
)

PROGRESS_FILE = "progress.jsonl"
PROGRESS_PREFIX = "progress"
MANIFEST_FILE = "manifest.json"
CANCEL_FILE = "cancel"
FOLLOWER_FILE = "follower"
ENDED_FILE = "ended"
ALIVE_FILE = "alive"


@dataclass(frozen=True)
class WorkDir:
    """A work location (a local directory, or an object-store/HDFS URI) and the filesystem options to reach it."""

    location: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def is_local(self) -> bool:
        return urlsplit(self.location).scheme in ("", "file")

    @property
    def path(self) -> Path:
        """The local directory (a local work location only)."""
        return Path(urlsplit(self.location).path if self.location.startswith("file:") else self.location)

    def child(self, *names: str) -> str:
        return "/".join([self.location.rstrip("/"), *names])

    def filesystem(self) -> FileSystem:
        return filesystem_for(self.location, options=self.options)

    def prepare(self) -> None:
        """A fresh attempt: the local directory made, a remote prefix's leftovers (a rerun) removed."""
        if self.is_local:
            self.path.mkdir(parents=True, exist_ok=True)
            for name in (PROGRESS_FILE, MANIFEST_FILE, CANCEL_FILE, FOLLOWER_FILE, ENDED_FILE, ALIVE_FILE):
                (self.path / name).unlink(missing_ok=True)
        else:
            self.filesystem().delete_tree(self.location)

    def reporter(self) -> Callable[[dict[str, Any]], None]:
        """A thread-safe ``report(event)`` writing each event at once (a line, or an object)."""
        lock = threading.Lock()
        sequence = iter(range(1, 1 << 62))
        filesystem = None if self.is_local else self.filesystem()

        def report(event: dict[str, Any]) -> None:
            line = json.dumps({"at": time.time(), **event}, default=str) + "\n"
            with lock:
                if filesystem is None:
                    with (self.path / PROGRESS_FILE).open("a", encoding="utf-8") as stream:
                        stream.write(line)
                else:
                    with filesystem.open(self.child(PROGRESS_PREFIX, f"{next(sequence):08d}.json"), "wb") as stream:
                        stream.write(line.encode())

        return report

    def write_manifest(self, manifest: Any) -> None:
        self._write(MANIFEST_FILE, json.dumps(manifest, default=str).encode())

    def write_follower(self, *, host: str, pid: int, token: str = "", lease: float = 0.0, beat: int = 0) -> None:
        """The worker following the driver now: ``pid`` on ``host``; pid 0 while it waits for a successor (``token``:
        the hand-over's, recorded in ``Job.adoption`` too). A follower on another host holds a lease of ``lease``
        seconds, renewed by writing the record again with the next ``beat``."""
        record = {
            "host": host, "pid": pid, "at": time.time(), **({"token": token} if token else {}),
            **({"lease": lease, "beat": beat} if lease else {}),
        }  # fmt: skip
        self._write(FOLLOWER_FILE, json.dumps(record).encode())

    def follower(self) -> dict[str, Any] | None:
        """The worker following the driver now, or None when its launching worker never handed it over."""
        data = self._read(FOLLOWER_FILE)
        return None if data is None else dict(json.loads(data))

    def write_alive(self, beat: int) -> None:
        """The driver's beat: it still runs (its watchdog writes the next one every few seconds)."""
        self._write(ALIVE_FILE, json.dumps({"beat": beat, "at": time.time()}).encode())

    def alive(self) -> dict[str, Any] | None:
        """The driver's last beat, or None before its first."""
        data = self._read(ALIVE_FILE)
        return None if data is None else dict(json.loads(data))

    def write_ended(self, state: str, detail: str = "") -> None:
        """The driver's exit marker: it ended (``succeeded``, ``failed``, ``stopped``) and writes nothing more."""
        record = {"state": state, "detail": detail[:2000], "at": time.time()}
        self._write(ENDED_FILE, json.dumps(record).encode())

    def ended(self) -> dict[str, Any] | None:
        """The driver's exit marker, or None while it runs (or when it was killed -9)."""
        data = self._read(ENDED_FILE)
        return None if data is None else dict(json.loads(data))

    def read_manifest(self) -> dict[str, Any] | None:
        """The program's manifest, or None when it wrote none (it failed or was stopped)."""
        data = self._read(MANIFEST_FILE)
        return None if data is None else json.loads(data)

    def request_cancel(self) -> None:
        if self.is_local:
            (self.path / CANCEL_FILE).touch()
            return
        with self.filesystem().open(self.child(CANCEL_FILE), "wb") as stream:
            stream.write(b"cancel\n")

    def cancel_requested(self) -> bool:
        if self.is_local:
            return (self.path / CANCEL_FILE).exists()
        return bool(self.filesystem().exists(self.child(CANCEL_FILE)))

    def _write(self, name: str, data: bytes) -> None:
        """Write ``name`` whole: locally through a rename, on a store as one object (visible once written)."""
        if self.is_local:
            partial = self.path / (name + ".partial")
            partial.write_bytes(data)
            partial.rename(self.path / name)
            return
        with self.filesystem().open(self.child(name), "wb") as stream:
            stream.write(data)

    def _read(self, name: str) -> bytes | None:
        if self.is_local:
            path = self.path / name
            return path.read_bytes() if path.exists() else None
        filesystem = self.filesystem()
        if not filesystem.exists(self.child(name)):
            return None
        with filesystem.open(self.child(name), "rb") as stream:
            return stream.read()


class ProgressReader:
    """A work location's progress events not read yet: the local file's new whole lines (a line being written is
    left for the next read), or the remote prefix's new objects in their order."""

    def __init__(self, work: WorkDir) -> None:
        self.work = work
        self.offset = 0  # local: the bytes read so far
        self.seen = ""  # remote: the last object read

    def read(self) -> Iterator[dict[str, Any]]:
        lines = self._local_lines() if self.work.is_local else self._remote_lines()
        for line in lines:
            if line.strip():
                yield json.loads(line)

    def _local_lines(self) -> list[bytes]:
        path = self.work.path / PROGRESS_FILE
        if not path.exists():
            return []
        with path.open("rb") as stream:
            stream.seek(self.offset)
            data = stream.read()
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        return complete.splitlines()

    def _remote_lines(self) -> list[bytes]:
        filesystem = self.work.filesystem()
        listed = filesystem.list_files(self.work.child(PROGRESS_PREFIX)) or []
        names = sorted(entry.relative for entry in listed if entry.relative > self.seen)
        lines = []
        for name in names:
            with filesystem.open(self.work.child(PROGRESS_PREFIX, name), "rb") as stream:
                lines.extend(stream.read().splitlines())
            self.seen = name
        return lines
