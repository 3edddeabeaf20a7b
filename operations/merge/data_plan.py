"""
The data a merge copies: when its location rules put an imported table or partition in another directory than the
one its files are in, that directory is one copy unit (a partition, or an unpartitioned table), copied with the
relocation's verified copy before anything is published (``operations.merge.data_copy``). Frozen values only: the
preview reads them (``operations.merge.data_preview``), the fingerprint binds them, the stored preview keeps their
counts and a capped sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ("DATA_UNITS_SHOWN", "DataCopyPlan", "DataUnit")

DATA_UNITS_SHOWN = 20  # units listed in the stored preview; all of them are counted and fingerprinted


@dataclass(frozen=True)
class DataUnit:
    """One directory to copy: ``key`` names it in the target (``db.table`` or ``db.table/part_name``)."""

    key: str
    source: str
    destination: str
    files: int
    bytes: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class DataCopyPlan:
    """Every unit the merge copies, and the estimated copy time (``seconds`` at ``bytes_per_second``, from ``basis``).
    No units: the location rules move no data (or there are none)."""

    units: tuple[DataUnit, ...] = ()
    bytes_per_second: float = 0.0
    basis: str = ""

    @property
    def files(self) -> int:
        return sum(unit.files for unit in self.units)

    @property
    def bytes(self) -> int:
        return sum(unit.bytes for unit in self.units)

    @property
    def seconds(self) -> float:
        if not self.units or not self.bytes_per_second:
            return 0.0
        return round(max(self.bytes / self.bytes_per_second, 0.1), 1)  # shown in tenths: never "0 s" for some data

    def fingerprinted(self) -> list[tuple[str, str, str, int, int]]:
        """What an approval binds: every unit with its files and bytes (the estimate is advice, not bound)."""
        return [(u.key, u.source, u.destination, u.files, u.bytes) for u in self.units]

    def journal(self) -> list[dict[str, str]]:
        """The units as a merge journals them before copying (``MergeImport.data_copy``)."""
        return [{"key": u.key, "source": u.source, "destination": u.destination} for u in self.units]

    def as_dict(self) -> dict[str, Any]:
        return {
            "units": len(self.units),
            "files": self.files,
            "bytes": self.bytes,
            "seconds": self.seconds,
            "bytes_per_second": round(self.bytes_per_second, 1),
            "basis": self.basis,
            "sample": [u.as_dict() for u in self.units[:DATA_UNITS_SHOWN]],
        }
