"""
The values of a Hadoop SequenceFile (``STORED AS SEQUENCEFILE``: Hive writes each row's LazySimpleSerDe text as a
``Text`` value, its key an empty ``BytesWritable``), read in Python so no Hadoop reader is needed (Spark Connect, an
object store Spark's Hadoop cannot reach).

The layout is Hadoop's ``SequenceFile.Writer`` (hadoop-common ``org/apache/hadoop/io/SequenceFile.java``, version 6):
``SEQ``, the version byte, the key and value class names, the compression flags, the metadata, a 16-byte sync marker;
then records ``int32 length, int32 key length, key, value``, a length of -1 announcing a sync marker. Strings and a
``Text``'s length are Hadoop's variable-length integers (``WritableUtils.readVLong``). Only uncompressed files are
read (Hive's default): a compressed one is refused, naming its codec.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import BinaryIO

__all__ = ("SequenceFileError", "codec", "values")

SYNC_ESCAPE = -1
TEXT = "org.apache.hadoop.io.Text"


class SequenceFileError(ValueError):
    """Not a SequenceFile this reader takes."""


OLDEST_LAYOUT = 5  # SequenceFile layouts this reader takes: 5, and 6 (metadata after the flags)
LAYOUT_WITH_METADATA = 6


def codec(stream: BinaryIO) -> str:
    """The compression codec's class named in the file's header (``""``: uncompressed), read from its first bytes
    only (what the preview asks of every SequenceFile it would convert)."""
    _layout, _value_class, compressed = _header(stream)
    return _string(stream) if compressed else ""


def values(stream: BinaryIO) -> Iterator[bytes]:
    """The bytes of every ``Text`` value of the file, in order."""
    layout, value_class, compressed = _header(stream)
    if compressed:
        raise SequenceFileError(f"a compressed SequenceFile ({_string(stream)}) is not read here")
    if value_class != TEXT:
        raise SequenceFileError(f"values of {value_class}, not {TEXT}")
    if layout >= LAYOUT_WITH_METADATA:
        for _ in range(2 * _int(stream)):
            _string(stream)  # metadata pairs
    _exact(stream, 16)  # the sync marker
    while (head := stream.read(4)) != b"":
        length = _unpack(head)
        if length == SYNC_ESCAPE:
            _exact(stream, 16)
            continue
        key_length = _int(stream)
        _exact(stream, key_length)
        record = _exact(stream, length - key_length)
        size, start = _vlong(record, 0)
        yield record[start : start + size]


def _header(stream: BinaryIO) -> tuple[int, str, bool]:
    """The layout, the value class and whether records or blocks are compressed (the codec's name follows)."""
    if _exact(stream, 3) != b"SEQ":
        raise SequenceFileError("not a SequenceFile (no SEQ header)")
    layout = _exact(stream, 1)[0]  # the file layout's number (Hadoop's, not Hive's)
    if layout < OLDEST_LAYOUT:
        raise SequenceFileError(f"SequenceFile version {layout} is older than this reader takes (5, 6)")
    _string(stream)  # the key's class: ignored
    value_class = _string(stream)
    compressed, block_compressed = _exact(stream, 1)[0], _exact(stream, 1)[0]
    return layout, value_class, bool(compressed or block_compressed)


def _exact(stream: BinaryIO, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise SequenceFileError("the SequenceFile ends inside a record")
    return data


def _unpack(data: bytes) -> int:
    if len(data) != 4:
        raise SequenceFileError("the SequenceFile ends inside a record")
    return int(struct.unpack(">i", data)[0])


def _int(stream: BinaryIO) -> int:
    return _unpack(_exact(stream, 4))


def _string(stream: BinaryIO) -> str:
    """``Text.readString``: a variable-length size, then UTF-8."""
    first = _exact(stream, 1)
    size = _vlong_size(first[0])
    data = first + _exact(stream, size - 1)
    length, _ = _vlong(data, 0)
    return _exact(stream, length).decode()


def _vlong_size(first: int) -> int:
    signed = first - 256 if first > 127 else first
    if signed >= -112:
        return 1
    return (-119 - signed) if signed < -120 else (-111 - signed)


def _vlong(data: bytes, offset: int) -> tuple[int, int]:
    """``WritableUtils.readVLong`` at ``offset``: (value, offset after it)."""
    first = data[offset] - 256 if data[offset] > 127 else data[offset]
    if first >= -112:
        return first, offset + 1
    size = _vlong_size(data[offset])
    value = 0
    for byte in data[offset + 1 : offset + size]:
        value = (value << 8) | byte
    return (~value if first < -120 else value), offset + size
