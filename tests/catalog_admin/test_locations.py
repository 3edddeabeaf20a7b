"""
The filesystems behind locations: local disk for real, configuration and URL handling of object stores and HDFS
(no namenode can run here: HDFS is tested up to the client it would call), and object stores for real on SeaweedFS
(``slow``).
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import xxhash

from catalog_admin.filesystem_options import filesystem_options, rename_limit_bytes
from catalog_admin.hive.locations import normalize_location
from catalog_admin.locations import (
    CHECKSUM_CHUNK,
    Digest,
    FileEntry,
    LocalFileSystem,
    UnreachableFileSystem,
    _local_path_text,
    filesystem_for,
    kernel_copy,
    mapped_digest,
    stream_digest,
)
from catalog_admin.object_stores import (
    FsspecFileSystem,
    credentials_environment,
    plan_credentials_environment,
    plan_filesystems,
    with_credentials,
)
from tests.fixtures.object_store import S3Server


@pytest.mark.parametrize(
    "location",
    [
        "file:/wh/db.db/.catalog-admin-trash/t/dt=1",
        "file:///wh/.hidden/x",
        "/wh/.x",
        "file:/wh/./x",
        "file:/wh/../x",
        "file:/wh/x/.",
        "file:/wh/x/..",
        "file:/wh/..x/y.",
        "file:/wh//x",
        "file:/wh/x?y",
        "file://localhost/wh/x",
    ],
)
def test_a_local_path_is_the_one_a_uri_parse_gives(location: str) -> None:
    """The fast path of a plain ``file:/`` location (hidden names such as the trash's included) gives what
    ``Path(urlsplit(…).path)`` gives, and the slow path keeps ``.``/``..`` segments, doubled slashes and queries."""
    # given
    parsed = str(Path(urlsplit(normalize_location(location)).path))

    # when
    fast = _local_path_text(location)

    # then
    assert fast == parsed


def test_filesystem_options_come_from_the_environment_globally_and_per_metastore() -> None:
    """Endpoints, regions and profiles, globally and per metastore; never a credential."""
    # given
    env = {
        "CATALOG_S3_ENDPOINT_URL": "http://minio:9000",
        "CATALOG_S3_REGION": "eu-west-1",
        "METASTORE_S3_ENDPOINT_LEGACY": "http://old-store:9000",
        "CATALOG_HDFS_OPTIONS": "dfs.client.use.datanode.hostname=true",
        "AWS_SECRET_ACCESS_KEY": "never-copied",
        "CATALOG_OBJECT_STORE_RENAME_LIMIT_BYTES": "1000",
    }

    # when
    options = filesystem_options(env, ("prod", "legacy"))

    # then
    assert options == {
        "s3": {"endpoint_url": "http://minio:9000", "region": "eu-west-1"},
        "hdfs": {"dfs.client.use.datanode.hostname": "true"},
        "metastores": {"legacy": {"s3": {"endpoint_url": "http://old-store:9000", "region": "eu-west-1"}}},
    }
    assert "never-copied" not in repr(options)
    assert rename_limit_bytes(env) == 1000


@pytest.mark.parametrize(
    ("location", "kind", "path", "by_copy"),
    [
        ("file:/data/t", LocalFileSystem, None, False),
        ("s3a://lake/warehouse/t/", FsspecFileSystem, "lake/warehouse/t", True),
        ("s3://lake/t", FsspecFileSystem, "lake/t", True),
        ("hdfs://nn.example:8020/warehouse/t", FsspecFileSystem, "hdfs://nn.example:8020/warehouse/t", False),
        ("abfs://c@acct.dfs.core.windows.net/t", UnreachableFileSystem, None, False),
    ],
)
def test_each_scheme_gets_its_filesystem_and_path(location: str, kind: type, path: str | None, by_copy: bool) -> None:
    """s3/s3a are object stores (rename = copy + delete) given bucket/key; HDFS keeps its URL and renames."""
    # given / when
    configured = {"s3": {"region": "us-east-1"}, "hdfs": {"dfs.client.use.datanode.hostname": "true"}}
    filesystem = filesystem_for(location, options=configured)

    # then
    assert isinstance(filesystem, kind)
    assert filesystem.scheme == location.split(":")[0]
    assert filesystem.renames_by_copy is by_copy
    if path is not None:
        assert filesystem.path(location) == path


@pytest.mark.parametrize("location", ["s3a://lake/t", "hdfs://nn:8020/w/t"])
def test_without_configuration_object_stores_and_hdfs_are_unreachable(
    monkeypatch: pytest.MonkeyPatch, location: str
) -> None:
    """No endpoint, region, profile, credentials or Hadoop configuration: the console has no client and says so."""
    # given
    for name in ("AWS_ACCESS_KEY_ID", "AWS_PROFILE", "HADOOP_CONF_DIR"):
        monkeypatch.delenv(name, raising=False)

    # when
    filesystem = filesystem_for(location, options={"s3": {}, "hdfs": {}})

    # then
    assert isinstance(filesystem, UnreachableFileSystem)
    assert filesystem.exists(location) is None


def test_a_metastore_uses_its_own_object_store_options() -> None:
    """A metastore's own endpoint wins over the global one, for that metastore only."""
    # given
    options = {"s3": {"endpoint_url": "http://a"}, "metastores": {"legacy": {"s3": {"endpoint_url": "http://b"}}}}

    # when
    own, other = (filesystem_for("s3a://x/y", name, options=options) for name in ("legacy", "prod"))

    # then
    assert (own.options, other.options) == ({"endpoint_url": "http://b"}, {"endpoint_url": "http://a"})


def test_credentials_are_added_from_the_environment_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The executors get the driver's keys through the closure; a named profile is left to botocore."""
    # given
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "id")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")

    # when / then
    assert with_credentials({"endpoint_url": "http://a"}) == {
        "endpoint_url": "http://a",
        "key": "id",
        "secret": "secret",
    }
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    assert with_credentials({"endpoint_url": "http://a"}) == {"endpoint_url": "http://a"}


def test_a_job_driver_uses_its_own_credentials_instead_of_a_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a job's driver the worker's resolved keys (CATALOG_JOB_S3_*) replace the profile the executors may lack."""
    # given
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "global")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "global-secret")
    monkeypatch.setenv("CATALOG_JOB_S3_KEY", "own")
    monkeypatch.setenv("CATALOG_JOB_S3_SECRET", "own-secret")
    monkeypatch.setenv("CATALOG_JOB_S3_TOKEN", "own-token")

    # when
    options = with_credentials({"endpoint_url": "http://a", "profile": "lake"})

    # then
    assert options == {"endpoint_url": "http://a", "key": "own", "secret": "own-secret", "token": "own-token"}


def test_a_profile_is_resolved_for_a_job_s_driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A metastore's profile gives the driver's variables; without a profile the worker's AWS variables do; an
    unknown profile gives none."""
    # given
    profiles = tmp_path / "credentials"
    profiles.write_text("[lake]\naws_access_key_id = lake-id\naws_secret_access_key = lake-secret\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(profiles))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "global")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "global-secret")

    # when / then
    assert credentials_environment({"profile": "lake"}) == {
        "CATALOG_JOB_S3_KEY": "lake-id",
        "CATALOG_JOB_S3_SECRET": "lake-secret",
    }
    assert credentials_environment({"endpoint_url": "http://a"}) == {
        "CATALOG_JOB_S3_KEY": "global",
        "CATALOG_JOB_S3_SECRET": "global-secret",
    }
    assert credentials_environment({"profile": "nobody"}) == {}


def test_a_merges_driver_reaches_each_side_with_that_sides_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan with the source's own filesystem options: the worker resolves each side's profile into its own
    variables, and the driver, given them, reads the source with the source's keys and writes with the target's."""
    # given
    profiles = tmp_path / "credentials"
    profiles.write_text(
        "[lake]\naws_access_key_id = lake-id\naws_secret_access_key = lake-secret\n\n"
        "[landing]\naws_access_key_id = landing-id\naws_secret_access_key = landing-secret\n"
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(profiles))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    plan = {
        "filesystems": {"s3": {"endpoint_url": "http://b", "profile": "landing"}},
        "source_filesystems": {"s3": {"endpoint_url": "http://a", "profile": "lake"}},
    }

    # when: the worker's side
    environment = plan_credentials_environment(plan)

    # then
    assert environment == {
        "CATALOG_JOB_S3_KEY": "landing-id", "CATALOG_JOB_S3_SECRET": "landing-secret",
        "CATALOG_JOB_SOURCE_S3_KEY": "lake-id", "CATALOG_JOB_SOURCE_S3_SECRET": "lake-secret",
    }  # fmt: skip

    # when: the driver's side, with those variables and no profile file
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    for name, value in environment.items():
        monkeypatch.setenv(name, value)

    # then
    assert plan_filesystems(plan)["s3"] == {"endpoint_url": "http://b", "key": "landing-id", "secret": "landing-secret"}
    assert plan_filesystems(plan, "source_filesystems")["s3"] == {
        "endpoint_url": "http://a", "key": "lake-id", "secret": "lake-secret",
    }  # fmt: skip
    one_sided = {"filesystems": plan["filesystems"]}  # a relocation: the sources are read as the copies are written
    assert plan_filesystems(one_sided, "source_filesystems") == plan_filesystems(one_sided)


def test_an_unreachable_hdfs_reports_unknown_instead_of_failing() -> None:
    """Without a namenode the preview cannot check HDFS: existence and size are unknown (None), not an error."""
    # given: a configured cluster whose namenode does not answer
    options = {"hdfs": {"dfs.client.use.datanode.hostname": "true"}, "hdfs_probe_seconds": 1}
    filesystem = filesystem_for("hdfs://127.0.0.1:1/warehouse/t", options=options)

    # when / then
    assert filesystem.authority == "127.0.0.1:1"
    assert filesystem.exists("hdfs://127.0.0.1:1/warehouse/t") is None
    assert filesystem.list_files("hdfs://127.0.0.1:1/warehouse/t") is None


def test_local_listing_checksum_copy_and_delete(tmp_path: Path) -> None:
    """Files listed recursively in order with sizes; MD5 of the content; copies create parents; delete is recursive."""
    # given
    (tmp_path / "t" / "dt=1").mkdir(parents=True)
    (tmp_path / "t" / "dt=1" / "a").write_bytes(b"hello")
    (tmp_path / "t" / "b").write_bytes(b"")
    filesystem, root = LocalFileSystem(), f"file:{tmp_path / 't'}"

    # when
    listed = filesystem.list_files(root)
    filesystem.copy_file(f"{root}/dt=1/a", f"file:{tmp_path / 'u' / 'dt=1' / 'a'}")
    checksum = filesystem.checksum(f"file:{tmp_path / 'u' / 'dt=1' / 'a'}")
    filesystem.delete_tree(root)

    # then
    assert listed == [FileEntry(f"{root}/b", "b", 0), FileEntry(f"{root}/dt=1/a", "dt=1/a", 5)]
    assert checksum == hashlib.md5(b"hello").hexdigest()
    assert not (tmp_path / "t").exists()
    assert filesystem.list_files(root) is None


@pytest.mark.parametrize("size", [0, 5, CHECKSUM_CHUNK + 7])
def test_a_mapped_digest_equals_a_streamed_one_and_the_reference_hashes(tmp_path: Path, size: int) -> None:
    """A local file hashed through its memory map gives the digest and size a chunked read gives, for MD5 and
    xxh3_128 alike (empty files and files longer than a chunk included)."""
    # given
    content = bytes(range(256)) * (size // 256) + bytes(size % 256)
    (tmp_path / "f").write_bytes(content)

    # when
    mapped = {a: mapped_digest(tmp_path / "f", a) for a in ("md5", "xxh3_128")}
    streamed = {a: stream_digest(io.BytesIO(content), a) for a in ("md5", "xxh3_128")}

    # then
    assert (
        mapped
        == streamed
        == {
            "md5": Digest("md5", hashlib.md5(content).hexdigest(), size),
            "xxh3_128": Digest("xxh3_128", xxhash.xxh3_128(content).hexdigest(), size),
        }
    )
    assert LocalFileSystem().checksum(f"file:{tmp_path / 'f'}") == hashlib.md5(content).hexdigest()


def test_an_unknown_checksum_algorithm_is_named(tmp_path: Path) -> None:
    # given
    (tmp_path / "f").write_bytes(b"x")

    # when / then
    with pytest.raises(ValueError, match="Unknown checksum algorithm 'crc8'; known: md5, xxh3_128"):
        LocalFileSystem().digest(f"file:{tmp_path / 'f'}", "crc8")


def test_the_kernel_copy_replaces_a_longer_earlier_copy_byte_for_byte(tmp_path: Path) -> None:
    """A partial or stale copy left by an earlier run is replaced, never appended to or left longer."""
    # given
    content = bytes(range(256)) * 40_000
    (tmp_path / "source").write_bytes(content)
    (tmp_path / "copy").write_bytes(b"stale" * 3_000_000)

    # when
    copied = kernel_copy(tmp_path / "source", tmp_path / "copy")

    # then
    assert copied == len(content)
    assert (tmp_path / "copy").read_bytes() == content


@pytest.mark.slow
def test_s3_lists_copies_verifies_renames_and_deletes(s3_filesystems: S3Server) -> None:
    """On a real S3 server: listing with sizes, MD5, a rename that copies every object then deletes the source."""
    # given
    filesystem = filesystem_for(s3_filesystems.location("fs-test"))
    source, destination = s3_filesystems.location("fs-test", "t"), s3_filesystems.location("fs-test", "t2")
    with filesystem.open(f"{source}/dt=1/part-0", "wb") as stream:
        stream.write(b"abc" * 1000)
    with filesystem.open(f"{source}/part-1", "wb") as stream:
        stream.write(b"x")

    # when
    listed = filesystem.list_files(source)
    size = filesystem.tree_size(source)
    filesystem.rename(source, destination)

    # then
    assert [(f.relative, f.size) for f in listed] == [("dt=1/part-0", 3000), ("part-1", 1)]
    assert (size.files, size.bytes) == (2, 3001)
    assert filesystem.exists(source) is False
    assert [(f.relative, f.size) for f in filesystem.list_files(destination)] == [("dt=1/part-0", 3000), ("part-1", 1)]
    assert filesystem.checksum(f"{destination}/dt=1/part-0") == hashlib.md5(b"abc" * 1000).hexdigest()
    with pytest.raises(FileExistsError):
        filesystem.rename(destination, destination)
    filesystem.delete_tree(destination)
    assert filesystem.exists(destination) is False
