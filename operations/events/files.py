"""
The data files a ``CREATE_TABLE`` or ``ADD_PARTITION`` message lists, as ``DbNotificationListener`` lists them.

``DbNotificationListener.FileIterator(location)`` (2.3, 3.1, 4.0) lists the location with ``fs.listStatus(loc,
VALID_FILES_FILTER)``: files only (no directories, not recursive), none whose name starts with ``_`` or ``.``; no
location lists nothing (``files == null``). Each file is written by ``ReplChangeManager.encodeFileUri``:

- 2.3 (``encodeFileUri(fileUriStr, fileChecksum)``): the file's URI, ``#checksum`` appended when the filesystem has
  one (``checksumFor``: ``fs.getFileChecksum``, which only HDFS answers; local files and S3A give none);
- 3.1 (static ``encodeFileUri(fileUriStr, fileChecksum, encodedSubDir)``) and 4.0 (the instance method, through
  ``encodeFileUri(fileUriStr, fileChecksum, cmRoot, encodedSubDir)``): ``uri#checksum#cmroot#subdir``, where without
  change management (``hive.repl.cm.enabled`` off by default: ``cmroot``/``getCmRoot`` null) the checksum and root are
  left out whatever the filesystem: ``uri###``.

Which tables list files (``onCreateTable``, ``onAddPartition`` / ``PartitionFilesIterator``): 2.3 and 3.1 every
table and partition; 4.0 none of an external table (``MetaStoreUtils.isExternalTable(t) ? null : …``: an empty
``files`` / ``partitionFiles``) and, for a transactional table, each partition with an empty list ("the actual file
copy will be done by acid write event"). A ``PartitionFiles`` is ``{"partitionName", "files"}`` with
``Warehouse.makePartName(t.getPartitionKeys(), p.getValues())``.

Checksums the console cannot compute (HDFS's ``MD5-of-MD5-of-CRC32C``) are left out; a location the console cannot
list gives no files (Hive's listener would fail the statement there instead).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from catalog_admin.hive.locations import normalize_location
from catalog_admin.hive.partition_names import partition_name
from catalog_admin.hive.versions import SchemaVersion
from catalog_admin.locations import DirEntry, filesystem_for, is_hidden, list_directories
from operations.events.objects import PartitionObject, TableObject

__all__ = ("partition_files", "table_files")

NO_CHANGE_MANAGEMENT = "###"  # 3.1/4.0 encodeFileUri without a checksum and a cmroot: "#" "#" then "#" + ""


def table_files(metastore: str, version: SchemaVersion, table: TableObject) -> list[str]:
    """``JSONCreateTableMessage.files``: the files in the table's directory (none of an external table on 4.0)."""
    if version.capabilities.events_skip_external_and_transactional_files and table.is_external:
        return []
    return _data_files(metastore, version, table.location)


def partition_files(
    metastore: str, version: SchemaVersion, table: TableObject, keys: list[str], parts: Iterable[PartitionObject]
) -> list[dict[str, Any]]:
    """``JSONAddPartitionMessage.partitionFiles``: per partition its name and the files in its directory."""
    skips = version.capabilities.events_skip_external_and_transactional_files
    if skips and table.is_external:
        return []
    parts = list(parts)
    listings = (
        list_directories([p.location for p in parts if p.location], metastore)
        if not (skips and table.is_transactional)
        else {}
    )
    return [
        {
            "partitionName": partition_name(zip(keys, part.values, strict=False)),
            "files": _visible_files(version, part.location, listings.get(part.location)) if part.location else [],
        }
        for part in parts
    ]


def _data_files(metastore: str, version: SchemaVersion, location: str | None) -> list[str]:
    """``FileIterator(location)``: the location's own visible files, by name, each as ``encodeFileUri`` writes it."""
    if not location:
        return []
    return _visible_files(version, location, filesystem_for(location, metastore).list_directory(location))


def _visible_files(version: SchemaVersion, location: str, listing: tuple[DirEntry, ...] | None) -> list[str]:
    """The files of ``listing`` (``location``'s) as ``FileIterator`` gives them: no directories, no hidden names."""
    if not listing:
        return []
    suffix = NO_CHANGE_MANAGEMENT if version.capabilities.file_uris_carry_change_management_fields else ""
    base = normalize_location(location)
    return [f"{base}/{entry.name}{suffix}" for entry in listing if not entry.is_dir and not is_hidden(entry.name)]
