"""
The data a merge's location rules move (issue 26, item 4): two PostgreSQL metastores built for the test (a seeded 3.1
source whose warehouse holds real files, a seeded 4.0 target), a rule moving the source's warehouse under the
target's. The preview lists the units, files and bytes and the estimate; the execution copies every unit verified
before publishing (a resumed one re-verifies what it copied), the imported locations hold files equal to the source's;
revert removes the copies (keeping a file written since) and leaves the source as it was. Bad cases block the preview
naming what is wrong: a symbolic link in the data, a destination holding files, a source outside the source's roots.
These tests commit into their own metastores (``tests/fixtures/merge.py``), so they are not ``django_db`` tests.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections
from django.template.loader import render_to_string

from catalog_admin.db import allow_metastore_writes
from catalog_admin.locations import filesystem_for
from operations.merge.execute import merge_execute, merge_resume
from operations.merge.preview import merge_preview
from operations.merge.reads import MetastoreReader
from operations.merge.request import MergeRequest, parse_location_rule
from operations.merge.revert import merge_revert, merge_revert_preview
from operations.merge.workflow import MergeChange
from operations.models import MergeImport
from operations.spark.programs import merge as program
from operations.spark.programs import relocate
from tests.fixtures.object_store import LANDING_BUCKET, S3Server

pytestmark = [pytest.mark.matrix, pytest.mark.slow]

RENAMES = (("marketing", "marketing_imported"), ("sales", "sales_imported"))


def _warehouse(alias: str) -> Path:
    return Path(next(c.warehouse for c in settings.METASTORE_CONFIGS if c.name == alias))


def _request(source: str, target: str) -> MergeRequest:
    rule = parse_location_rule(f"{_warehouse(source)}={_warehouse(target)}/imported")
    return MergeRequest(source, target, databases=("marketing", "sales"), renames=RENAMES, location_rules=(rule,))


def _tree(root: Path) -> dict[str, str]:
    """Relative path → sha256 of every file under ``root``."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _merged(tree: dict[str, str]) -> dict[str, str]:
    """The files of the merged databases in a source warehouse's tree (the seed's ``ops`` database and the
    unregistered ``scratch_notes`` directory are not merged)."""
    return {path: digest for path, digest in tree.items() if not path.startswith(("ops.db/", "scratch_notes/"))}


def _pair(merge_target) -> tuple[str, str]:  # noqa: ANN001
    return merge_target("3.1.0"), merge_target("4.0.0")


def _imported_locations(target: str) -> list[str]:
    sql = (
        'SELECT s."LOCATION" FROM "PARTITIONS" p JOIN "SDS" s ON s."SD_ID" = p."SD_ID" '
        'JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" WHERE d."NAME" LIKE %s'
    )
    return [location for (location,) in MetastoreReader(target).rows(sql, ["%_imported"])]


def test_the_preview_lists_the_data_the_rules_move_and_nothing_when_they_move_none(merge_target) -> None:
    """Units, files and bytes as on disk, destinations under the rule, an estimate with its basis; a rule that keeps
    every location where it is copies nothing."""
    # given
    source, target = _pair(merge_target)
    on_disk = [_warehouse(source) / path for path in _merged(_tree(_warehouse(source)))]
    # when
    preview = merge_preview(_request(source, target))
    # then
    data = preview.data_copy
    assert preview.is_executable, preview.blockers
    assert data.files == len(on_disk) > 0
    assert data.bytes == sum(p.stat().st_size for p in on_disk)
    assert all(u.destination.startswith(f"file:{_warehouse(target)}/imported/") for u in data.units)
    assert any("/" in u.key for u in data.units)  # partitions are units of their own
    stored = preview.as_dict()["data_copy"]
    assert stored["files"] == data.files and stored["units"] == len(data.units)
    assert stored["seconds"] == round(max(data.bytes / stored["bytes_per_second"], 0.1), 1)
    assert "CATALOG_MERGE_COPY_BYTES_PER_SECOND" in stored["basis"]
    page = render_to_string("operations/inc/merge_preview.html", {"m": MergeChange(preview).as_dict()})
    assert 'id="merge-data-copy"' in page and f"{data.files} files" in page and data.units[0].key in page
    # given the orders table's own directory gone (its archived partitions stay)
    shutil.rmtree(_warehouse(source) / "sales.db" / "orders")
    # when
    without = merge_preview(_request(source, target)).data_copy
    # then nothing below the missing directory is copied, nothing blocks
    orders = {u.source for u in without.units if u.key.startswith("sales_imported.orders/")}
    assert orders and all("/archive/" in location for location in orders)
    assert without.files == data.files - sum(1 for p in on_disk if "sales.db/orders/" in str(p))
    # when
    same = parse_location_rule(f"{_warehouse(source)}={_warehouse(source)}")
    unmoved = merge_preview(MergeRequest(source, target, ("sales",), (("sales", "s2"),), (same,)))
    # then
    assert unmoved.data_copy.units == ()


def test_the_merge_copies_the_data_verified_then_revert_removes_it_and_the_source_stays(merge_target) -> None:
    """Every imported partition's location holds the source's files (checksums equal); revert removes the copies,
    keeping a file written into one since, and the source's files are untouched."""
    # given
    source, target = _pair(merge_target)
    request = _request(source, target)
    before = _tree(_warehouse(source))
    events: list[dict] = []
    # when
    merge = merge_execute(request, merge_preview(request), report=events.append)
    # then
    copied = _warehouse(target) / "imported"
    assert merge.state == MergeImport.State.PUBLISHED
    assert _tree(copied) == _merged(before)
    assert sorted(merge.data_copy["completed"]) == sorted(u["key"] for u in merge.data_copy["units"])
    assert any(str(e.get("unit_done", "")).startswith("data ") for e in events)
    locations = _imported_locations(target)
    assert locations and all(location.startswith(f"file:{copied}/") for location in locations)
    with_data = sorted(u["destination"] for u in merge.data_copy["units"] if "/" in u["key"])  # partitions
    assert with_data and set(with_data) <= set(locations)
    assert all(Path(location.removeprefix("file:")).is_dir() for location in with_data)
    locations = with_data
    # given a file Hive wrote into one copy since
    written = Path(locations[0].removeprefix("file:")) / "written-after.txt"
    written.write_text("new\n")
    shown = merge_revert_preview(merge).as_dict()["data_copies"]
    assert shown["directories"] == len(merge.data_copy["units"]) and written.parent.as_posix() in " ".join(
        location.removeprefix("file:") for location in merge_revert_preview(merge).copies
    )
    # when
    merge_revert(merge)
    # then
    merge.refresh_from_db()
    left = _tree(copied)  # only the directory holding the new file is kept, whole
    assert {str(Path(path).parent) for path in left} == {str(written.parent.relative_to(copied))}
    assert left[str(written.relative_to(copied))] == hashlib.sha256(b"new\n").hexdigest()
    assert [k["location"] for k in merge.data_copy["kept"]] == [locations[0]]
    assert "written or changed after the job" in merge.data_copy["kept"][0]["reason"]
    assert _tree(_warehouse(source)) == before


def test_a_stopped_merge_resumes_re_verifying_what_it_copied(merge_target, monkeypatch) -> None:
    """A crash before publishing leaves the copied units journaled; a copy damaged meanwhile is found by the resumed
    merge's re-verification and copied again, then everything is published equal to the source."""
    # given
    source, target = _pair(merge_target)
    request = _request(source, target)

    def crash(name: str) -> None:
        if name == "merge.before_publish_commit":
            raise RuntimeError("injected crash")

    monkeypatch.setattr(program, "fault_point", crash)
    with pytest.raises(RuntimeError, match="injected crash"):
        merge_execute(request, merge_preview(request))
    merge = MergeImport.objects.get(target=target)
    assert merge.state == MergeImport.State.FAILED and merge.data_copy["completed"]
    copied = _warehouse(target) / "imported"
    damaged = next(p for p in sorted(copied.rglob("*")) if p.is_file() and p.stat().st_size > 0)
    damaged.write_bytes(b"X" * damaged.stat().st_size)  # same size: only a checksum finds it
    # when
    monkeypatch.undo()
    events: list[dict] = []
    merge_resume(merge, report=events.append)
    # then
    merge.refresh_from_db()
    assert merge.state == MergeImport.State.PUBLISHED
    assert _tree(copied) == _merged(_tree(_warehouse(source)))
    assert any("differ now" in str(e.get("message", "")) for e in events)


def test_a_symbolic_link_in_the_data_blocks_naming_it(merge_target) -> None:
    """A link in a partition the rule moves: the preview blocks, naming the link; nothing is copied."""
    # given
    source, target = _pair(merge_target)
    partition = next(p.parent for p in sorted(_warehouse(source).rglob("*")) if p.is_file() and "=" in p.parent.name)
    link = partition / "linked"
    os.symlink("/etc/hostname", link)
    # when
    preview = merge_preview(_request(source, target))
    # then
    blockers = [b for b in preview.blockers if b.code == "data_symlink"]
    assert len(blockers) == 1 and f"file:{link}" in blockers[0].message
    assert not (_warehouse(target) / "imported").exists()


def test_a_destination_holding_files_blocks(merge_target) -> None:
    """A directory the rule leads into already holds a file: blocked, naming the unit and the directory."""
    # given
    source, target = _pair(merge_target)
    unit = merge_preview(_request(source, target)).data_copy.units[0]
    destination = Path(unit.destination.removeprefix("file:"))
    destination.mkdir(parents=True)
    (destination / "someone-elses").write_text("x")
    # when
    preview = merge_preview(_request(source, target))
    # then
    blockers = [b for b in preview.blockers if b.code == "data_destination_exists"]
    assert len(blockers) == 1 and unit.key in blockers[0].message and unit.destination in blockers[0].message
    assert not preview.is_executable


def test_a_source_outside_the_source_metastores_roots_blocks(merge_target, tmp_path: Path) -> None:
    """A partition whose files lie outside every directory the source governs is not read: blocked, naming it."""
    # given
    source, target = _pair(merge_target)
    outside = tmp_path / "elsewhere" / "dt=1"
    outside.mkdir(parents=True)
    (outside / "part-0").write_text("1\n")
    reader = MetastoreReader(source)
    sd_id = reader.rows('SELECT p."SD_ID" FROM "PARTITIONS" p ORDER BY p."PART_ID" LIMIT 1')[0][0]
    with allow_metastore_writes(), connections[source].cursor() as cursor:
        cursor.execute('UPDATE "SDS" SET "LOCATION" = %s WHERE "SD_ID" = %s', [f"file:{outside}", sd_id])
    rule = parse_location_rule(f"file:{tmp_path}={_warehouse(target)}/moved")
    request = _request(source, target)
    request = MergeRequest(source, target, request.databases, RENAMES, (*request.location_rules, rule))
    # when
    preview = merge_preview(request)
    # then
    blockers = [b for b in preview.blockers if b.code == "data_source_outside_roots"]
    assert len(blockers) == 1 and f"file:{outside}" in blockers[0].message


class _Stop(Exception):
    """What a job's report raises at a safe point when a cancel was requested (``JobCancelled`` there)."""


def test_a_stop_between_data_units_publishes_nothing_and_the_merge_resumes(merge_target, monkeypatch) -> None:
    """Stopped at the first safe point (one unit per batch here): that unit is journaled, no imported database is
    visible; the resumed merge copies the rest and publishes."""
    # given
    source, target = _pair(merge_target)
    request = _request(source, target)
    monkeypatch.setattr(relocate, "DEFAULT_BATCH_FILES", 1)

    def stop_at_first_data_unit(event: dict) -> None:
        if str(event.get("unit_done", "")).startswith("data "):
            raise _Stop

    # when
    first = merge_preview(request)
    with pytest.raises(_Stop):
        merge_execute(request, first, report=stop_at_first_data_unit)
    # then
    merge = MergeImport.objects.get(target=target)
    assert merge.state == MergeImport.State.FAILED and len(merge.data_copy["completed"]) == 1
    visible = 'SELECT COUNT(*) FROM "DBS" WHERE "NAME" LIKE %s'
    assert MetastoreReader(target).scalar(visible, ["%_imported"]) == 0
    again = merge_preview(request)  # its own partial copy is no one else's files: only "resume or revert it" blocks
    assert [b.code for b in again.blockers] == ["unfinished_merge"] and again.data_copy == first.data_copy
    # when
    merge_resume(merge)
    # then
    merge.refresh_from_db()
    assert merge.state == MergeImport.State.PUBLISHED
    assert MetastoreReader(target).scalar(visible, ["%_imported"]) == 2
    assert _tree(_warehouse(target) / "imported") == _merged(_tree(_warehouse(source)))


def test_a_file_written_into_a_source_during_the_copy_is_copied_before_the_publish(merge_target, monkeypatch) -> None:
    """Issue 26: the merge published what its listing held and a file written into a source during the copy was
    left behind. Each source is listed again before the publish: the new file is copied, verified and journaled (so
    the revert removes it with the rest)."""
    # given: a file appears in the first partition's source once the copy has listed it
    source, target = _pair(merge_target)
    request = _request(source, target)
    run = relocate.run
    appeared: list[Path] = []

    def copying(spark, plan, report):  # noqa: ANN001, ANN202
        manifest = run(spark, plan, report)
        if not appeared:
            unit = next(u for u in plan["units"] if "/" in u["key"] and u["files"])
            appeared.append(Path(unit["source"].removeprefix("file:")) / "written-during-copy.txt")
            appeared[0].write_text("late\n")
        return manifest

    monkeypatch.setattr(relocate, "run", copying)

    # when
    merge = merge_execute(request, merge_preview(request), report=lambda event: None)

    # then
    assert merge.state == MergeImport.State.PUBLISHED
    relative = str(appeared[0].relative_to(_warehouse(source)))
    assert _tree(_warehouse(target) / "imported")[relative] == hashlib.sha256(b"late\n").hexdigest()
    journaled = {f"{unit['key']}/{name}" for unit in merge.data_copy["units"]
                 for name, _size in merge.data_copy["files"].get(unit["key"], [])}  # fmt: skip
    assert any(path.endswith("written-during-copy.txt") for path in journaled)

    # and when reverted, the copy goes whole (the new file was the merge's)
    merge_revert(merge)
    merge.refresh_from_db()
    assert merge.data_copy["kept"] == []
    appeared[0].unlink()


def test_each_end_of_the_copy_is_reached_with_its_own_metastores_object_store_settings(
    merge_target, settings, s3_profiles: S3Server
) -> None:  # noqa: ANN001
    """The source's partition lies in a bucket only the source's profile may read; the rule moves it into a bucket
    only the target's profile may write. The copy reads with the source's settings and writes with the target's:
    the objects arrive equal, journaled; the revert removes them and the source's stay."""
    # given: each metastore with its own profile, and the target's unable to read the source's bucket
    source, target = _pair(merge_target)
    s3 = {"endpoint_url": s3_profiles.endpoint, "region": "us-east-1"}
    settings.CATALOG_FILESYSTEMS = {
        "s3": s3, "hdfs": {},
        "metastores": {source: {"s3": {**s3, "profile": "lake-reader"}},
                       target: {"s3": {**s3, "profile": "landing-writer"}}},
    }  # fmt: skip
    lake, landing = s3_profiles.location("lake", uuid.uuid4().hex), f"s3a://{LANDING_BUCKET}/{uuid.uuid4().hex}"
    contents = {"part-0": b"1,a\n", "part-1": b"2,b\n" * 1000}
    for name, data in contents.items():
        _put(s3_profiles, f"{lake}/sales/dt=1/{name}", data)
    with pytest.raises(PermissionError), filesystem_for(lake, target).open(f"{lake}/sales/dt=1/part-0", "rb") as s:
        s.read()
    _govern(source, lake)
    _govern(target, landing)
    request = _moving_one_partition(source, target, f"{lake}/sales/dt=1", f"{lake}={landing}")
    preview = merge_preview(request)
    assert preview.is_executable, preview.blockers
    # when
    merge = merge_execute(request, preview, report=[].append)
    # then
    copied = filesystem_for(landing, target)
    assert merge.state == MergeImport.State.PUBLISHED
    assert f"{landing}/sales/dt=1" in _imported_locations(target)
    for name, data in contents.items():
        with copied.open(f"{landing}/sales/dt=1/{name}", "rb") as stream:
            assert stream.read() == data
    # when reverted
    merge_revert(merge)
    # then the copies are gone, the source's objects stay
    assert not copied.list_files(f"{landing}/sales/dt=1")
    assert sorted(e.relative for e in filesystem_for(lake, source).list_files(f"{lake}/sales/dt=1")) == sorted(contents)


def test_a_store_the_copy_job_could_not_reach_blocks_naming_the_metastore_and_why(
    merge_target, settings, s3_profiles: S3Server
) -> None:  # noqa: ANN001
    """The target's profile has no credentials: its destination bucket could not be written, so the preview blocks
    as a data job's does (``engine_unreachable``), naming the target; the source's side reaches its bucket."""
    # given
    source, target = _pair(merge_target)
    s3 = {"endpoint_url": s3_profiles.endpoint}
    settings.CATALOG_FILESYSTEMS = {
        "s3": s3, "hdfs": {},
        "metastores": {source: {"s3": {**s3, "profile": "lake-reader"}}, target: {"s3": {**s3, "profile": "nobody"}}},
    }  # fmt: skip
    lake, landing = s3_profiles.location("lake", uuid.uuid4().hex), f"s3a://{LANDING_BUCKET}/{uuid.uuid4().hex}"
    _put(s3_profiles, f"{lake}/sales/dt=1/part-0", b"1,a\n")
    _govern(source, lake)
    _govern(target, landing)
    request = _moving_one_partition(source, target, f"{lake}/sales/dt=1", f"{lake}={landing}")
    # when
    preview = merge_preview(request)
    # then
    blockers = [b for b in preview.blockers if b.code == "data_engine_unreachable"]
    assert [b.subject for b in blockers] == [target]
    assert f"no S3 credentials are configured for metastore {target} (profile 'nobody' has no credentials" in (
        blockers[0].message
    )
    listed = [unit for unit in preview.data_copy.units if unit.source == f"{lake}/sales/dt=1"]
    assert [unit.files for unit in listed] == [1]  # the source's side was listed with the source's own profile


def _put(server: S3Server, location: str, data: bytes) -> None:
    """An object written with the server's administrator keys."""
    admin = {"endpoint_url": server.endpoint, "key": server.access_key, "secret": server.secret_key}
    with filesystem_for(location, options={"s3": admin}).open(location, "wb") as stream:
        stream.write(data)


def _moving_one_partition(source: str, target: str, location: str, rule: str) -> MergeRequest:
    """The test's merge, with the source's first partition at ``location`` and ``rule`` added to its location rules."""
    reader = MetastoreReader(source)
    sd_id = reader.rows('SELECT p."SD_ID" FROM "PARTITIONS" p ORDER BY p."PART_ID" LIMIT 1')[0][0]
    with allow_metastore_writes(), connections[source].cursor() as cursor:
        cursor.execute('UPDATE "SDS" SET "LOCATION" = %s WHERE "SD_ID" = %s', [location, sd_id])
    request = _request(source, target)
    rules = (*request.location_rules, parse_location_rule(rule))
    return MergeRequest(source, target, request.databases, RENAMES, rules)


def _govern(alias: str, root: str) -> None:
    """``root`` governed by metastore ``alias`` too (the merge fixture restores the configurations)."""
    settings.METASTORE_CONFIGS = [
        replace(c, extra_roots=(*c.extra_roots, root)) if c.name == alias else c for c in settings.METASTORE_CONFIGS
    ]
