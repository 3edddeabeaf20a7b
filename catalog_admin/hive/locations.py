"""
Hive locations as strings: one spelling per location and containment, with no filesystem access.

Hive stores local paths as ``file:/abs/path``; other writers use ``file:///abs/path``.

A metastore's *governed roots* (:class:`GovernedRoots`, :func:`root_locations`) are its configured roots (warehouse,
external warehouse, extra roots) and the database locations that lie inside one of them: a database elsewhere
(``file:/``, anyone's ``CREATE DATABASE … LOCATION``) widens nothing.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache

__all__ = (
    "SCHEME",
    "GovernedRoots",
    "canonical",
    "is_inside",
    "is_under",
    "normalize_location",
    "rewrite_prefix",
    "root_locations",
)

SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(//[^/]*)?")


@dataclass(frozen=True)
class GovernedRoots:
    """The directories a metastore's data may live in (canonical locations) and whether ``SET LOCATION`` may point
    outside them."""

    locations: tuple[str, ...]
    allow_outside: bool = False

    def governs(self, location: str) -> bool:
        """Whether ``location`` is strictly inside one of the roots (a root itself is never moved): as
        ``is_inside(location, root, strictly=True)`` for any root, with the roots' prefixes made once (a plan asks
        this of each of its 200,000 move ends)."""
        return canonical(location).startswith(self._inside_prefixes)

    @cached_property
    def _inside_prefixes(self) -> tuple[str, ...]:
        return tuple(canonical(root).rstrip("/") + "/" for root in self.locations)

    def contains(self, location: str) -> bool:
        """Whether ``location`` is one of the roots or inside one (what may be read)."""
        return any(is_inside(location, root) for root in self.locations)

    def describe(self) -> str:
        return ", ".join(self.locations) or "none configured"


def root_locations(configured: Iterable[str], databases: Iterable[str]) -> tuple[str, ...]:
    """The governed roots, canonical: the ``configured`` ones, then each database location inside one of them."""
    roots = tuple(dict.fromkeys(canonical(r) for r in configured if r))
    inside = (canonical(d) for d in databases if d and any(is_inside(d, root) for root in roots))
    return tuple(dict.fromkeys((*roots, *inside)))


@lru_cache(maxsize=1 << 18)
def canonical(location: str) -> str:
    """One spelling per directory: ``file:/x`` for ``/x`` and ``file:///x``, ``.`` and ``..`` resolved, no trailing
    or doubled slash (remembered: a plan of 100,000 directories asks for each many times)."""
    normal = normalize_location(location)
    match = SCHEME.match(normal)
    prefix = match.group(0) if match else ""
    path = normal[len(prefix) :]
    if not path:
        return prefix
    resolved = posixpath.normpath(path)
    return prefix + ("/" + resolved.lstrip("/") if resolved.startswith("/") else resolved)


def is_inside(location: str, root: str, *, strictly: bool = False) -> bool:
    """Whether ``location`` is ``root`` (unless ``strictly``) or inside it, compared canonically."""
    child, parent = canonical(location), canonical(root)
    return (child == parent and not strictly) or child.startswith(parent.rstrip("/") + "/")


@lru_cache(maxsize=1 << 18)
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
    return _normal_under(normalize_location(location), normalize_location(root))


def _normal_under(child: str, parent: str) -> bool:
    """:func:`is_under` of two normalized locations."""
    return child == parent or child.startswith(parent + "/")


def rewrite_prefix(location: str, old: str, new: str) -> str | None:
    """``location`` with the prefix ``old`` replaced by ``new`` (a path boundary), or None when it is not at or under
    ``old``."""
    location = normalize_location(location)
    if not _normal_under(location, normalize_location(old)):
        return None
    return new + location[len(old) :]
