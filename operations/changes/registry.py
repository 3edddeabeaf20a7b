"""The registry of change kinds: ``operation["kind"]`` -> the :class:`ChangeKind` that handles it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.changes.kind import ChangeKind

__all__ = ("change_kind", "register_change_kind", "registered_kinds")

_KINDS: dict[str, ChangeKind] = {}


def register_change_kind(kind: ChangeKind) -> None:
    """Make ``kind`` handle its ``operation_kinds``; an operation kind another change kind already handles is refused
    (two kinds answering one operation would be a silent choice)."""
    for name in kind.operation_kinds:
        found = _KINDS.get(name)
        if found is not None and type(found) is not type(kind):
            raise ValueError(f"Operation kind {name!r} is handled by {found.name!r} already, not by {kind.name!r}.")
        _KINDS[name] = kind


def registered_kinds() -> dict[str, str]:
    """Every operation kind handled, with the name of its change kind."""
    return {name: kind.name for name, kind in sorted(_KINDS.items())}


def change_kind(operation: Mapping[str, Any] | None) -> ChangeKind:
    """The change kind handling ``operation`` (a request's or an execution's stored operation); an operation of no
    registered kind is refused as ``invalid_parameter`` naming its kind."""
    name = (operation or {}).get("kind")
    found = _KINDS.get(name) if isinstance(name, str) else None
    if found is None:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"No change kind handles operations of kind {name!r}; known kinds: {', '.join(sorted(_KINDS)) or 'none'}.",
            {"kind": name},
        )
    return found
