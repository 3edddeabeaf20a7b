"""
Copying one file between Hive locations on a Spark executor, verified by size and checksum computed from the bytes of
both ends. Local disk to local disk, the kernel copies (``copy_file_range``, as ``cp`` does) and the source and the
copy are each hashed from the page cache; any other pair streams the bytes through, hashing them on the way, and the
copy is then read back from its filesystem. Either way the copy's checksum comes from the destination's own bytes, and
both ends must have the planned size. Only the filesystem layer is imported (no Django): this runs in Spark's Python
workers.
"""

from __future__ import annotations

from typing import Any

from catalog_admin.locations import (
    CHECKSUM_CHUNK,
    COPY_CHECKSUM,
    Digest,
    FileSystem,
    LocalFileSystem,
    filesystem_for,
    new_hash,
)

__all__ = ("copy_verified",)


def copy_verified(
    options: dict[str, Any], item: dict[str, Any], algorithm: str = COPY_CHECKSUM,
    source_options: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Copy ``item`` (``unit``, ``source``, ``destination``, ``size``), reading with ``source_options`` (else
    ``options``) and writing with ``options``; the result says whether it verified, with the source's checksum."""
    source, destination = item["source"], item["destination"]
    reader_fs = filesystem_for(source, options=options if source_options is None else source_options)
    writer_fs = filesystem_for(destination, options=options)
    try:
        if isinstance(reader_fs, LocalFileSystem) and isinstance(writer_fs, LocalFileSystem):
            original = reader_fs.digest(source, algorithm)
            reader_fs.copy_file(source, destination)
        else:
            original = _stream(reader_fs, writer_fs, source, destination, algorithm)
        copy = writer_fs.digest(destination, algorithm)
    except OSError as exc:
        return {**item, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    problems = []
    if original.size != item["size"]:
        problems.append(f"the source has {original.size} bytes, the plan listed {item['size']}")
    if copy.size != item["size"]:
        problems.append(f"the copy has {copy.size} bytes, the plan listed {item['size']}")
    if copy.hexdigest != original.hexdigest:
        problems.append(f"{algorithm} {copy.hexdigest} of the copy differs from the source's {original.hexdigest}")
    return {**item, "ok": not problems, "checksum": original.hexdigest, "error": "; ".join(problems)}


def _stream(reader_fs: FileSystem, writer_fs: FileSystem, source: str, destination: str, algorithm: str) -> Digest:
    """Stream the bytes through, hashing them; the source's digest."""
    digest, copied = new_hash(algorithm), 0
    with reader_fs.open(source, "rb") as reader, writer_fs.open(destination, "wb") as writer:
        while chunk := reader.read(CHECKSUM_CHUNK):
            digest.update(chunk)
            writer.write(chunk)
            copied += len(chunk)
    return Digest(algorithm, digest.hexdigest(), copied)
