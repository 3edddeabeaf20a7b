"""
URL converters for Hive object names, shared by the pages and the read API.

Hive accepts table names that are no single URL path segment (``a/b`` on every version, ``x?y``, ``%41`` on 4.x), and
such tables exist in real metastores. A name is one segment in which ``%`` and ``/`` travel as ``%25`` and ``%2F``
(on the wire ``%2525`` and ``%252F``: ``reverse`` percent-encodes the ``%``); any other character as usual.
"""

from __future__ import annotations

import re

from django.urls import register_converter

__all__ = ("HiveNameConverter", "PartitionNameConverter")

_ESCAPED = re.compile("%(25|2[Ff])")


class HiveNameConverter:
    """A database or table name as one path segment (``<hive_name:table>``)."""

    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        return _ESCAPED.sub(lambda match: chr(int(match.group(1), 16)), value)

    def to_url(self, value: str) -> str:
        return value.replace("%", "%25").replace("/", "%2F")


class PartitionNameConverter:
    """
    A partition name such as ``dt=2024-01-01/hour=3``: it spans several path segments.

    Clients URL-encode the name (``dt%3D2024-01-01%2Fhour%3D3``); the server decodes it before routing, so the
    converter sees Hive's own spelling (which escapes a ``/`` inside a value as ``%2F``, sent as ``%252F``).
    """

    regex = ".+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(HiveNameConverter, "hive_name")
register_converter(PartitionNameConverter, "partition_name")
