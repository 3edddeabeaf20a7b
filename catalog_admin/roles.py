"""The console's roles, as Django groups created by a data migration."""

from enum import StrEnum

__all__ = ("Role",)


class Role(StrEnum):
    VIEWER = "viewer"  # browses metastores
    STEWARD = "steward"  # requests changes
    APPROVER = "approver"  # approves other people's changes
    ADMIN = "admin"  # manages users, tokens and settings
