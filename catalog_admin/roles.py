"""The console's roles, as Django groups created by a data migration."""

from enum import StrEnum
from typing import Any

__all__ = ("Role", "is_operator")


class Role(StrEnum):
    VIEWER = "viewer"  # browses metastores
    STEWARD = "steward"  # requests changes
    APPROVER = "approver"  # approves other people's changes
    ADMIN = "admin"  # manages users, tokens and settings


def is_operator(user: Any) -> bool:
    """Whether ``user`` runs the console (staff, a superuser or an admin): they see its wiring, such as the
    metastores' connection strings."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    return bool(user.is_staff or user.is_superuser or user.groups.filter(name=Role.ADMIN).exists())
