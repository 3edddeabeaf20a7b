"""
``ANALYZE TABLE`` as HiveParser.g reads it (``analyzeStatement``): ``ANALYZE TABLE tableOrPartition COMPUTE
STATISTICS (NOSCAN | FOR COLUMNS (columnNameList)?)?``, where a partition spec's key may stand without a value (every
value: ``PARTITION (dt)``, Hive's dynamic partition spec). The console's extensions: comparisons in the partition
spec (``dt >= '2024-01-01'``, as its other partition statements) and ``WITH ('only_stale'='true')`` (only partitions
whose statistics Hive does not mark accurate). Hive 2.3's ``PARTIALSCAN`` and ``CACHE METADATA`` are refused by name.
"""

from __future__ import annotations

from typing import Any, Protocol

from operations.specs import AnalyzeTable, PartitionPredicate, TableRef

__all__ = ("analyze_statement",)

OPERATORS = ("=", "<", ">", "<=", ">=", "<>", "!=")


class _Parser(Protocol):
    """What this grammar asks of the statement parser (``operations/ddl/parser.py``)."""

    def expect_words(self, *words: str) -> None: ...
    def accept_words(self, *words: str) -> bool: ...
    def accept_op(self, op: str) -> bool: ...
    def expect_op(self, op: str) -> None: ...
    def peek_word(self) -> str: ...
    def peek(self) -> Any: ...
    def identifier(self) -> str: ...
    def literal(self) -> str: ...
    def table_ref(self) -> TableRef: ...
    def properties(self) -> tuple[tuple[str, str], ...]: ...
    def parenthesized(self, item: Any) -> list[Any]: ...
    def error(self, problem: str) -> Exception: ...
    def unsupported(self, clause: str, problem: str) -> Exception: ...


def analyze_statement(parser: _Parser) -> AnalyzeTable:
    """``ANALYZE TABLE …`` (the parser stands on ``ANALYZE``)."""
    parser.expect_words("ANALYZE", "TABLE")
    target = parser.table_ref()
    predicates: tuple[PartitionPredicate, ...] = ()
    if parser.accept_words("PARTITION"):
        predicates = tuple(p for p in parser.parenthesized(lambda: _predicate(parser)) if p is not None)
    if parser.peek_word() == "CACHE":
        raise parser.unsupported("CACHE METADATA", "ANALYZE TABLE … CACHE METADATA is not run by the console")
    parser.expect_words("COMPUTE", "STATISTICS")
    noscan, columns = False, None
    if parser.peek_word() == "PARTIALSCAN":
        raise parser.unsupported("PARTIALSCAN", "PARTIALSCAN (Hive 2.3's RCFile scan) is not run by the console; "
                                 "write COMPUTE STATISTICS or COMPUTE STATISTICS NOSCAN")  # fmt: skip
    if parser.accept_words("NOSCAN"):
        noscan = True
    elif parser.accept_words("FOR", "COLUMNS"):
        columns = _column_names(parser)
    only_stale = False
    if parser.accept_words("WITH"):
        for key, value in parser.properties():
            if key != "only_stale" or value.lower() not in ("true", "false"):
                raise parser.error(f"ANALYZE … WITH takes 'only_stale'='true|false', not '{key}'='{value}'")
            only_stale = value.lower() == "true"
    return AnalyzeTable(target=target, partitions=predicates, noscan=noscan, columns=columns, only_stale=only_stale)


def _predicate(parser: _Parser) -> PartitionPredicate | None:
    """``k op 'v'``, or a bare ``k`` (every value of the key: no predicate)."""
    key = parser.identifier().lower()
    token = parser.peek()
    if token.text not in OPERATORS:
        return None
    parser.expect_op(token.text)
    return PartitionPredicate(key=key, op="<>" if token.text == "!=" else token.text, value=parser.literal())


def _column_names(parser: _Parser) -> tuple[str, ...]:
    """``c1, c2`` (Hive's columnNameList, unparenthesized), or none: every column."""
    if parser.peek().kind not in ("word", "quoted") or parser.peek_word() == "WITH":
        return ()
    names = [parser.identifier().lower()]
    while parser.accept_op(","):
        names.append(parser.identifier().lower())
    return tuple(names)
