"""
Copying one file between Hive locations on a Spark executor, verified: the bytes are streamed from the source to
the destination while their MD5 is computed; the destination is then read back and must have the planned size and
the same MD5. Only the filesystem layer is imported (no Django): this runs in Spark's Python workers.
"""

from __future__ import annotations

import hashlib
from typing import Any

from catalog_admin.locations import CHECKSUM_CHUNK, filesystem_for

__all__ = ("copy_verified",)


def copy_verified(options: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    """Copy ``item`` (``unit``, ``source``, ``destination``, ``size``); the result says whether it verified."""
    source, destination = item["source"], item["destination"]
    reader_fs = filesystem_for(source, options=options)
    writer_fs = filesystem_for(destination, options=options)
    try:
        source_md5, copied = _stream(reader_fs, writer_fs, source, destination)
        destination_md5 = writer_fs.checksum(destination)
    except OSError as exc:
        return {**item, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    problems = []
    if copied != item["size"]:
        problems.append(f"copied {copied} bytes, the plan listed {item['size']}")
    if destination_md5 != source_md5:
        problems.append(f"checksum {destination_md5} of the copy differs from the source's {source_md5}")
    return {**item, "ok": not problems, "md5": source_md5, "error": "; ".join(problems)}


def _stream(reader_fs: Any, writer_fs: Any, source: str, destination: str) -> tuple[str, int]:
    """Stream the bytes through, hashing them; (md5, bytes)."""
    digest, copied = hashlib.md5(usedforsecurity=False), 0
    with reader_fs.open(source, "rb") as reader, writer_fs.open(destination, "wb") as writer:
        while chunk := reader.read(CHECKSUM_CHUNK):
            digest.update(chunk)
            writer.write(chunk)
            copied += len(chunk)
    return digest.hexdigest(), copied
