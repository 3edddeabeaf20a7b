"""
Hive locations as strings: one spelling per location and containment, with no filesystem access.

Hive stores local paths as ``file:/abs/path``; other writers use ``file:///abs/path``.
"""

from __future__ import annotations

__all__ = ("is_under", "normalize_location", "rewrite_prefix")


def normalize_location(location: str) -> str:
    """One spelling per location: ``file:///x`` and ``/x`` become ``file:/x``; no trailing slash."""
    location = location.strip()
    if location.startswith("/"):
        location = f"file:{location}"
    if location.startswith("file://"):
        rest = location.removeprefix("file://")
        location = "file:" + ("/" + rest.lstrip("/") if not rest.startswith("localhost") else rest[len("localhost") :])
    return location.rstrip("/") if len(location) > len("file:/") else location


def is_under(location: str, root: str) -> bool:
    """Whether ``location`` is ``root`` itself or inside it."""
    child, parent = normalize_location(location), normalize_location(root)
    return child == parent or child.startswith(parent + "/")


def rewrite_prefix(location: str, old: str, new: str) -> str | None:
    """``location`` with the prefix ``old`` replaced by ``new`` (a path boundary), or None when it is not at or under
    ``old``."""
    location = normalize_location(location)
    if not is_under(location, old):
        return None
    return new + location[len(old) :]
