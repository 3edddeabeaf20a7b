"""What a steward asks to merge: source, target, databases, renames and location rules, checked before any read."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.hive.locations import normalize_location, rewrite_prefix

__all__ = ("LocationRule", "MergeRequest", "parse_location_rule", "parse_rename")


@dataclass(frozen=True)
class LocationRule:
    """A prefix map: a location at or under ``old`` is rewritten to the same path under ``new``."""

    old: str
    new: str

    def apply(self, location: str) -> str | None:
        """The rewritten location, or None when ``location`` is not at or under ``old`` (a path boundary)."""
        return rewrite_prefix(location, self.old, self.new)


@dataclass(frozen=True)
class MergeRequest:
    """The merge a preview describes: names are lower-case as Hive stores them; ``databases`` empty means all."""

    source: str
    target: str
    databases: tuple[str, ...] = ()
    renames: tuple[tuple[str, str], ...] = ()
    location_rules: tuple[LocationRule, ...] = ()

    def new_name(self, database: str) -> str:
        return self._renamed.get(database, database)

    def rewrite(self, location: str | None) -> str | None:
        """``location`` after the first rule that matches (the longest ``old`` first), unchanged when none does."""
        if not location:
            return location
        for rule in self._longest_rules_first:
            rewritten = rule.apply(location)
            if rewritten is not None:
                return rewritten
        return normalize_location(location)

    @cached_property
    def _renamed(self) -> dict[str, str]:
        return dict(self.renames)

    @cached_property
    def _longest_rules_first(self) -> tuple[LocationRule, ...]:
        return tuple(sorted(self.location_rules, key=lambda r: -len(r.old)))

    def as_dict(self) -> dict:
        return {
            "source": self.source,
            "target": self.target,
            "databases": list(self.databases),
            "renames": dict(self.renames),
            "location_rules": [{"old": r.old, "new": r.new} for r in self.location_rules],
        }


def parse_rename(text: str) -> tuple[str, str]:
    """``src_db=new_name`` as a pair of lower-case names; a clear ``invalid_parameter`` error naming it otherwise."""
    old, sep, new = text.partition("=")
    old, new = old.strip().lower(), new.strip().lower()
    if not sep or not old or not new or "=" in new:
        raise _invalid(f"Rename '{text}' is not of the form src_db=new_name.", rename=text)
    return old, new


def parse_location_rule(text: str) -> LocationRule:
    """``OLD=NEW`` as a :class:`LocationRule` (both normalized); a clear error naming it otherwise."""
    old, sep, new = text.partition("=")
    if not sep or not old.strip() or not new.strip():
        raise _invalid(f"Location rule '{text}' is not of the form OLD=NEW (two location prefixes).", rule=text)
    return LocationRule(old=normalize_location(old), new=normalize_location(new))


def _invalid(message: str, **details: str) -> ApplicationError:
    return ApplicationError(ErrorCode.INVALID_PARAMETER, message, details)
