"""
The relocate program's copies, in this process (the same functions Spark's Python workers run): every file copied
and verified by size and checksum from both ends' own bytes, a source that disagrees with the plan refused, and the
manifest recording each copy's checksum with its algorithm. On Spark and against S3: ``tests/witness/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import xxhash

from operations.spark.programs import relocate
from operations.spark.programs.file_copy import copy_verified


def tree(root: Path, files: dict[str, bytes]) -> dict[str, bytes]:
    for relative, content in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(content)
    return files


def plan_of(source: Path, destination: Path, files: dict[str, bytes], **extra: object) -> dict:
    units: dict[str, list[dict]] = {}
    for relative, content in sorted(files.items()):
        unit = relative.split("/", 1)[0]
        units.setdefault(unit, []).append(
            {"source": f"file:{source / relative}", "destination": f"file:{destination / relative}",
             "size": len(content)}
        )  # fmt: skip
    return {
        "units": [
            {"key": key, "source": f"file:{source / key}", "destination": f"file:{destination / key}", "files": listed}
            for key, listed in units.items()
        ],
        "filesystems": {},
        "completed": [],
        **extra,
    }


def test_every_file_is_copied_and_the_manifest_holds_each_copys_checksum(tmp_path: Path) -> None:
    """Several threads copy; the manifest's checksums are the xxh3_128 of the bytes now at the destination."""
    # given
    files = tree(tmp_path / "src", {f"dt={d}/part-{n}": bytes([d, n]) * (1000 * n + 1) for d in range(3)
                                    for n in range(5)} | {"dt=9/empty": b""})  # fmt: skip
    events: list[dict] = []

    # when
    manifest = relocate.run(None, plan_of(tmp_path / "src", tmp_path / "dst", files), events.append)

    # then
    assert (manifest["checksum"], manifest["files"], manifest["bytes"]) == (
        "xxh3_128",
        len(files),
        sum(len(c) for c in files.values()),
    )
    copies = {Path(d.removeprefix("file:")).relative_to(tmp_path / "dst").as_posix(): checksum
              for unit in manifest["units"].values() for d, checksum in unit["checksums"].items()}  # fmt: skip
    assert copies == {
        relative: xxhash.xxh3_128((tmp_path / "dst" / relative).read_bytes()).hexdigest() for relative in files
    }
    assert {relative: (tmp_path / "dst" / relative).read_bytes() for relative in files} == files
    assert sorted(e["unit_done"] for e in events if "unit_done" in e) == ["dt=0", "dt=1", "dt=2", "dt=9"]


def test_a_source_that_no_longer_has_the_planned_size_fails_its_copy_naming_both(tmp_path: Path) -> None:
    """A file that grew since the preview is not taken as verified, and the program fails before reporting it done."""
    # given
    files = tree(tmp_path / "src", {"dt=1/a": b"12345", "dt=2/b": b"xy"})
    plan = plan_of(tmp_path / "src", tmp_path / "dst", files)
    (tmp_path / "src" / "dt=1" / "a").write_bytes(b"1234567")
    events: list[dict] = []

    # when
    with pytest.raises(relocate.CopyFailed) as failure:
        relocate.run(None, plan, events.append)

    # then
    assert "the source has 7 bytes, the plan listed 5; the copy has 7 bytes, the plan listed 5" in str(failure.value)
    assert [e["unit_done"] for e in events if "unit_done" in e] == ["dt=2"]


def test_a_missing_source_is_a_failed_copy_not_an_exception(tmp_path: Path) -> None:
    # given
    item = {"unit": "dt=1", "source": f"file:{tmp_path / 'gone'}", "destination": f"file:{tmp_path / 'd'}", "size": 1}

    # when
    result = copy_verified({}, item)

    # then
    assert not result["ok"] and result["error"].startswith("FileNotFoundError")
    assert not (tmp_path / "d").exists()


def test_md5_can_be_asked_for_and_an_unknown_checksum_copies_nothing(tmp_path: Path) -> None:
    # given
    files = tree(tmp_path / "src", {"dt=1/a": b"hello"})

    # when
    manifest = relocate.run(None, plan_of(tmp_path / "src", tmp_path / "md5", files, checksum="md5"), [].append)
    with pytest.raises(ValueError, match="Unknown checksum 'sha0' in the plan; known: md5, xxh3_128"):
        relocate.run(None, plan_of(tmp_path / "src", tmp_path / "bad", files, checksum="sha0"), [].append)

    # then
    assert manifest["checksum"] == "md5"
    assert manifest["units"]["dt=1"]["checksums"] == {
        f"file:{tmp_path / 'md5' / 'dt=1' / 'a'}": "5d41402abc4b2a76b9719d911017c592"
    }
    assert not (tmp_path / "bad").exists()
