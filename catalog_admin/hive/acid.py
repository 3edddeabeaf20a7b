"""
The directory state of a transactional table or partition, as Hive's ``AcidUtils.getAcidState`` computes it.

Pure: the caller lists the directory (names, sizes, whether a base carries the compactor's ``_metadata_acid``) and
reads the valid write ids and transactions from the metastore; this module decides which base is in use, which
deltas and delete deltas follow it, and what is obsolete, aborted or an original file. Followed:

- Hive 3.1 ``ql/src/java/org/apache/hadoop/hive/ql/io/AcidUtils.java``: ``getAcidState``, ``getChildState``,
  ``isValidBase``, ``parseBase``, ``parseDelta``, ``ParsedDelta.compareTo``.
- Hive 4.0 the same file: ``processBaseDir``, ``processDeltaDir``, ``isDirUsable`` (the ``_v<txn>`` visibility
  suffix: a directory written by a compactor transaction that is not committed for the reader is skipped, or listed
  as aborted when that transaction aborted), ``isCompactedBase``, ``findBestWorkingDeltas``.
- ``storage-api/src/java/org/apache/hadoop/hive/common/ValidReaderWriteIdList.java`` (``isWriteIdRangeValid``,
  ``isWriteIdRangeAborted``, ``isValidBase``) and ``ValidReadTxnList.java`` (``isTxnValid``, ``isTxnAborted``).
- ``Initiator.determineCompactionType`` (3.1 and 4.0) for :func:`compaction_need`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = (
    "AcidDirectoryState",
    "CompactionNeed",
    "CompactionThresholds",
    "DirEntry",
    "ParsedDir",
    "RangeResponse",
    "ValidTxnList",
    "ValidWriteIdList",
    "acid_state",
    "compaction_need",
    "parse_acid_dir",
)

BASE_PREFIX, DELTA_PREFIX, DELETE_DELTA_PREFIX = "base_", "delta_", "delete_delta_"
# base_N, delta_M_N, delta_M_N_S, each with Hive 4's optional _vTXN (AcidUtils.VISIBILITY_PATTERN "_v\\d+").
_BASE = re.compile(r"^base_(\d+)(?:_v(\d+))?$")
_DELTA = re.compile(r"^(delete_delta|delta)_(\d+)_(\d+)(?:_(\d+))?(?:_v(\d+))?$")
MIN_VALUE = -(2**63)  # Long.MIN_VALUE: the base of a table converted to ACID (AcidUtils, "base_-9223372036854775808")


class RangeResponse(StrEnum):
    """``ValidWriteIdList.RangeResponse``."""

    NONE = "none"
    SOME = "some"
    ALL = "all"


@dataclass(frozen=True)
class ValidWriteIdList:
    """A reader's valid write ids of one table (``ValidReaderWriteIdList``): every id up to ``high_watermark`` except
    the open and aborted ones in ``invalid`` (sorted); ``aborted`` says which of those aborted."""

    high_watermark: int
    invalid: tuple[int, ...] = ()
    aborted: frozenset[int] = frozenset()

    @property
    def min_open_write_id(self) -> int | None:
        return min((w for w in self.invalid if w not in self.aborted), default=None)

    def is_valid(self, write_id: int) -> bool:
        """``isWriteIdValid``: at or under the high-water mark and neither open nor aborted."""
        return write_id <= self.high_watermark and not self._is_invalid(write_id)

    def is_aborted(self, write_id: int) -> bool:
        return write_id in self.aborted

    def is_valid_base(self, write_id: int) -> bool:
        """``isValidBase``: under every open write id and at or under the high-water mark."""
        open_id = self.min_open_write_id
        return (open_id is None or write_id < open_id) and write_id <= self.high_watermark

    def range_valid(self, low: int, high: int) -> RangeResponse:
        """``isWriteIdRangeValid``: are all, some or none of ``low..high`` valid for this reader."""
        if low > self.high_watermark:
            return RangeResponse.NONE
        if self.invalid and self.invalid[0] > high:
            return RangeResponse.ALL
        count = max(0, high - self.high_watermark) + sum(1 for w in self.invalid if low <= w <= high)
        if count == 0:
            return RangeResponse.ALL
        return RangeResponse.NONE if count == high - low + 1 else RangeResponse.SOME

    def range_aborted(self, low: int, high: int) -> RangeResponse:
        """``isWriteIdRangeAborted``: are all, some or none of ``low..high`` aborted."""
        if self.high_watermark < low:
            return RangeResponse.NONE
        count = sum(1 for w in self.aborted if low <= w <= high)
        if count == 0:
            return RangeResponse.NONE
        return RangeResponse.ALL if count == high - low + 1 else RangeResponse.SOME

    def _is_invalid(self, write_id: int) -> bool:
        at = bisect_left(self.invalid, write_id)
        return at < len(self.invalid) and self.invalid[at] == write_id

    def __str__(self) -> str:
        """Hive's ``writeToString`` shape, less the table name: ``hwm:minOpen:open:aborted``."""
        opened = ",".join(str(w) for w in self.invalid if w not in self.aborted)
        aborted = ",".join(str(w) for w in self.invalid if w in self.aborted)
        low = self.min_open_write_id
        return f"{self.high_watermark}:{low if low is not None else 'MAX'}:{opened}:{aborted}"


@dataclass(frozen=True)
class ValidTxnList:
    """A reader's valid transactions (``ValidReadTxnList``), for Hive 4's ``_v<txn>`` visibility suffix."""

    high_watermark: int
    open: frozenset[int] = frozenset()
    aborted: frozenset[int] = frozenset()

    def is_valid(self, txn_id: int) -> bool:
        return txn_id <= self.high_watermark and txn_id not in self.open and txn_id not in self.aborted

    def is_aborted(self, txn_id: int) -> bool:
        return txn_id in self.aborted


@dataclass(frozen=True)
class DirEntry:
    """One child of the table or partition directory: a file (with its size) or a directory (with the bytes under
    it); ``compacted``: a base whose ``_metadata_acid`` says ``"dataFormat":"compacted"`` (``MetaDataFile``)."""

    name: str
    is_dir: bool
    size: int = 0
    compacted: bool = False
    files: tuple[str, ...] = ()  # the files under a directory that is not base/delta (original files)


@dataclass(frozen=True)
class ParsedDir:
    """A base or (delete) delta directory, parsed from its name."""

    name: str
    kind: str  # base | delta | delete_delta
    min_write_id: int
    max_write_id: int
    statement_id: int = -1
    visibility_txn_id: int = 0
    size: int = 0

    def sort_key(self) -> tuple:
        """``ParsedDelta.compareTo``: min write id up, max write id down, statement id up, then the path."""
        return (self.min_write_id, -self.max_write_id, self.statement_id, self.name)


def parse_acid_dir(entry: DirEntry) -> ParsedDir | None:
    """``parseBase`` / ``parseDelta`` (with Hive 4's visibility suffix); None for any other name."""
    if match := _BASE.match(entry.name):
        write_id = int(match.group(1))
        return ParsedDir(entry.name, "base", write_id, write_id, -1, int(match.group(2) or 0), entry.size)
    if match := _DELTA.match(entry.name):
        kind, low, high, statement, visibility = match.groups()
        return ParsedDir(
            entry.name, kind, int(low), int(high), int(statement) if statement else -1, int(visibility or 0), entry.size
        )
    return None


@dataclass(frozen=True)
class AcidDirectoryState:
    """What ``getAcidState`` returns for one directory (names relative to it)."""

    base: ParsedDir | None
    deltas: tuple[ParsedDir, ...]  # insert deltas in use, in Hive's order
    delete_deltas: tuple[ParsedDir, ...]  # delete deltas in use, in Hive's order
    obsolete: tuple[str, ...]
    aborted: tuple[str, ...]
    original_files: tuple[str, ...]
    # Hive throws ACID_NOT_ENOUGH_HISTORY here: a base exists but none is usable by this reader.
    not_enough_history: str = ""

    @property
    def current(self) -> tuple[ParsedDir, ...]:
        """Deltas and delete deltas together, in Hive's order (``getCurrentDirectories``)."""
        return tuple(sorted((*self.deltas, *self.delete_deltas), key=ParsedDir.sort_key))


@dataclass
class _Scan:
    base: ParsedDir | None = None
    oldest_base: ParsedDir | None = None
    working: list[ParsedDir] = field(default_factory=list)
    obsolete: list[str] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)
    originals: list[str] = field(default_factory=list)
    original_dirs: list[DirEntry] = field(default_factory=list)


def acid_state(
    entries: list[DirEntry] | tuple[DirEntry, ...],
    write_ids: ValidWriteIdList,
    txns: ValidTxnList | None = None,
    *,
    visibility: bool = True,
) -> AcidDirectoryState:
    """``AcidUtils.getAcidState`` over one directory's children.

    ``visibility``: Hive 4's rules (``_v`` suffixes checked against ``txns``, aborted insert-overwrite bases, the
    min-open-write-id base rule); False: Hive 3.1's ``getChildState``.
    """
    scan = _Scan()
    txns = txns or ValidTxnList(high_watermark=2**63 - 1)
    for entry in sorted(entries, key=lambda e: e.name):
        if entry.name.startswith(("_", ".")):  # FileUtils.HIDDEN_FILES_PATH_FILTER
            continue
        if not entry.is_dir:
            if entry.size:  # ignoreEmptyFiles, as the readers and the Initiator call it
                scan.originals.append(entry.name)
            continue
        parsed = parse_acid_dir(entry)
        if parsed is None:
            scan.original_dirs.append(entry)
        elif parsed.kind == "base":
            _base_dir(scan, parsed, entry, write_ids, txns, visibility)
        else:
            _delta_dir(scan, parsed, write_ids, txns, visibility)
    if scan.base is not None:  # a base makes the original files obsolete
        scan.obsolete += scan.originals + [d.name for d in scan.original_dirs]
        scan.originals = []
    else:
        scan.originals += [f"{d.name}/{name}" for d in scan.original_dirs for name in d.files]
    current = _best_working_deltas(scan, write_ids)
    history = ""
    if scan.oldest_base is not None and scan.base is None:
        low = write_ids.invalid[0] if write_ids.invalid else "x"
        history = (
            f"Not enough history available for ({write_ids.high_watermark},{low}). "
            f"Oldest available base: {scan.oldest_base.name}"
        )  # ErrorMsg.ACID_NOT_ENOUGH_HISTORY
    return AcidDirectoryState(
        base=scan.base,
        deltas=tuple(d for d in current if d.kind == "delta"),
        delete_deltas=tuple(d for d in current if d.kind == "delete_delta"),
        obsolete=tuple(scan.obsolete),
        aborted=tuple(scan.aborted),
        original_files=tuple(sorted(scan.originals)),
        not_enough_history=history,
    )


def _usable(scan: _Scan, parsed: ParsedDir, txns: ValidTxnList, visibility: bool) -> bool:
    """``isDirUsable`` (Hive 4): a directory whose visibility transaction is not committed for the reader is
    skipped, and listed as aborted when that transaction aborted."""
    if not visibility or txns.is_valid(parsed.visibility_txn_id):
        return True
    if txns.is_aborted(parsed.visibility_txn_id):
        scan.aborted.append(parsed.name)
    return False


def _base_dir(
    scan: _Scan, parsed: ParsedDir, entry: DirEntry, write_ids: ValidWriteIdList, txns: ValidTxnList, visibility: bool
) -> None:
    """``getChildState``'s base branch (3.1) / ``processBaseDir`` (4.0)."""
    if not _usable(scan, parsed, txns, visibility):
        return
    write_id = parsed.max_write_id
    if scan.oldest_base is None or scan.oldest_base.max_write_id > write_id:
        scan.oldest_base = parsed
    compacted = entry.compacted or (visibility and parsed.visibility_txn_id > 0)
    if visibility and write_ids.is_aborted(write_id) and not compacted:  # an aborted INSERT OVERWRITE
        scan.aborted.append(parsed.name)
        return
    better = scan.base is None or scan.base.max_write_id < write_id
    if visibility and scan.base is not None and scan.base.max_write_id == write_id and compacted:
        better = txns.is_valid(parsed.visibility_txn_id)  # the compactor's base wins over an IOW one
    if not better:
        scan.obsolete.append(parsed.name)
    elif _valid_base(parsed, compacted, write_ids, visibility):
        if scan.base is not None:
            scan.obsolete.append(scan.base.name)
        scan.base = parsed


def _valid_base(parsed: ParsedDir, compacted: bool, write_ids: ValidWriteIdList, visibility: bool) -> bool:
    """``isValidBase``: a compactor's base must be under every open write id; an INSERT OVERWRITE base (no
    ``_metadata_acid``, no ``_v``) is a write like a delta's."""
    write_id = parsed.max_write_id
    if write_id == MIN_VALUE:
        return True
    low = write_ids.min_open_write_id
    if visibility and low is not None and write_id <= low:
        return True
    return write_ids.is_valid_base(write_id) if compacted else write_ids.is_valid(write_id)


def _delta_dir(
    scan: _Scan, parsed: ParsedDir, write_ids: ValidWriteIdList, txns: ValidTxnList, visibility: bool
) -> None:
    """``getChildState``'s delta branch (3.1) / ``processDeltaDir`` (4.0)."""
    if not _usable(scan, parsed, txns, visibility):
        return
    all_aborted = write_ids.range_aborted(parsed.min_write_id, parsed.max_write_id) is RangeResponse.ALL
    if all_aborted:
        scan.aborted.append(parsed.name)
        if visibility:  # 4.0 stops here; 3.1 still weighs the delta as a working one
            return
    if write_ids.range_valid(parsed.min_write_id, parsed.max_write_id) is not RangeResponse.NONE:
        scan.working.append(parsed)


def _best_working_deltas(scan: _Scan, write_ids: ValidWriteIdList) -> list[ParsedDir]:
    """``findBestWorkingDeltas``: the deltas covering the most write ids after the base, the rest obsolete."""
    current = scan.base.max_write_id if scan.base is not None else 0
    last_statement, previous = -1, None
    chosen: list[ParsedDir] = []
    for delta in sorted(scan.working, key=ParsedDir.sort_key):
        if delta.max_write_id > current:
            if write_ids.range_valid(current + 1, delta.max_write_id) is not RangeResponse.NONE:
                chosen.append(delta)
                current, last_statement, previous = delta.max_write_id, delta.statement_id, delta
        elif delta.max_write_id == current and last_statement >= 0:
            chosen.append(delta)  # one statement of a multi-statement transaction
            previous = delta
        elif previous is not None and (delta.min_write_id, delta.max_write_id, delta.statement_id) == (
            previous.min_write_id,
            previous.max_write_id,
            previous.statement_id,
        ):
            chosen.append(delta)  # delta_x_y and delete_delta_x_y of the same range
            previous = delta
        else:
            scan.obsolete.append(delta.name)
    return chosen


@dataclass(frozen=True)
class CompactionThresholds:
    """The Initiator's thresholds: ``hive.compactor.delta.num.threshold`` (10), ``hive.compactor.delta.pct.threshold``
    (0.1) and ``hive.compactor.abortedtxn.threshold`` (1000); a table's ``compactorthreshold.<name>`` property wins."""

    delta_num: int = 10
    delta_pct: float = 0.1
    aborted: int = 1000

    def for_table(self, params: dict[str, str]) -> CompactionThresholds:
        """``Initiator.determineCompactionType``: ``tblproperties.get(COMPACTORTHRESHOLD_PREFIX + name)``."""
        prefix = "compactorthreshold."
        num = params.get(prefix + "hive.compactor.delta.num.threshold")
        pct = params.get(prefix + "hive.compactor.delta.pct.threshold")
        return CompactionThresholds(
            delta_num=int(num) if num else self.delta_num,
            delta_pct=float(pct) if pct else self.delta_pct,
            aborted=self.aborted,
        )


@dataclass(frozen=True)
class CompactionNeed:
    """Whether Hive's Initiator would queue a compaction here, of which type, and why (``score``: how far past its
    worst threshold, for ordering)."""

    compaction_type: str  # major | minor | "" (none)
    reason: str
    base_bytes: int
    delta_bytes: int
    deltas: int
    aborted_transactions: int
    score: float

    @property
    def needed(self) -> bool:
        return bool(self.compaction_type)


def compaction_need(
    state: AcidDirectoryState,
    thresholds: CompactionThresholds,
    *,
    original_bytes: int = 0,
    aborted_transactions: int = 0,
    insert_only: bool = False,
) -> CompactionNeed:
    """``Initiator.checkForCompaction`` / ``determineCompactionType``: too many aborted transactions → major; delta
    bytes over ``delta_pct`` of the base (and originals) → major; no base but deltas → major; more than ``delta_num``
    deltas → minor (major on an insert-only table, or without a base)."""
    base_bytes = (state.base.size if state.base else 0) + original_bytes
    current = state.current
    delta_bytes = sum(d.size for d in current)
    ratio = delta_bytes / base_bytes if base_bytes else 0.0
    score = max(
        len(current) / thresholds.delta_num if thresholds.delta_num else 0.0,
        ratio / thresholds.delta_pct if thresholds.delta_pct and base_bytes else 0.0,
        aborted_transactions / thresholds.aborted if thresholds.aborted else 0.0,
    )
    common = {"base_bytes": base_bytes, "delta_bytes": delta_bytes, "deltas": len(current)}
    common |= {"aborted_transactions": aborted_transactions, "score": round(score, 4)}
    if aborted_transactions > thresholds.aborted:
        reason = f"{aborted_transactions} aborted transactions (threshold {thresholds.aborted})"
        return CompactionNeed("major", reason, **common)
    no_base = base_bytes == 0 and delta_bytes > 0
    if not no_base and base_bytes and ratio > thresholds.delta_pct:
        reason = f"deltas are {ratio:.0%} of the base (threshold {thresholds.delta_pct:.0%})"
        return CompactionNeed("major", reason, **common)
    if len(current) > thresholds.delta_num:
        kind = "major" if insert_only or no_base else "minor"
        reason = f"{len(current)} deltas (threshold {thresholds.delta_num})" + (", no base" if no_base else "")
        return CompactionNeed(kind, reason, **common)
    return CompactionNeed("", "under every threshold", **common)
