"""
The ``CREATE [EXTERNAL] TABLE`` clauses of the DDL parser (HiveParser.g's ``createTableStatement``, 2.3 to 4.0), as a
mixin of :class:`operations.ddl.parser._Parser`: ``parse_alter`` reads a CREATE TABLE statement through it.

String literals of ``ROW FORMAT`` and ``SERDEPROPERTIES`` are read as Hive reads them
(``BaseSemanticAnalyzer.unescapeSQLString``: ``'\\001'`` is the octal byte 1, ``'\\u0001'`` a code point), so the
delimiters stored are Hive's.
"""

from __future__ import annotations

import re
from typing import Any

from operations.ddl.errors import DdlParseError
from operations.specs import CreateTable, TableRef

__all__ = ("STORED_AS_FORMATS", "CreateTableClauses", "hive_unescape")

# The STORED AS words the console writes (Hive's StorageFormatFactory descriptors; JSONFILE is 4.0 only).
STORED_AS_FORMATS = ("TEXTFILE", "SEQUENCEFILE", "RCFILE", "ORC", "PARQUET", "AVRO")
# ROW FORMAT DELIMITED's clauses: the words that start each, its key in CreateTable.row_format, the words after.
_DELIMITED = (
    (("FIELDS", "TERMINATED", "BY"), "FIELDS"),
    (("ESCAPED", "BY"), "ESCAPED"),
    (("COLLECTION", "ITEMS", "TERMINATED", "BY"), "COLLECTION"),
    (("MAP", "KEYS", "TERMINATED", "BY"), "MAPKEYS"),
    (("LINES", "TERMINATED", "BY"), "LINES"),
    (("NULL", "DEFINED", "AS"), "NULL"),
)
# Hive DDL after CREATE TABLE … that the console does not run (it names them instead of failing to parse).
_UNSUPPORTED = {
    ("SKEWED",): "SKEWED BY",
    ("STORED", "BY"): "STORED BY (a storage handler)",
    ("AS",): "AS SELECT",
    ("PRIMARY",): "PRIMARY KEY",
    ("CONSTRAINT",): "CONSTRAINT",
    ("PARTITIONED", "ON"): "PARTITIONED ON",
}
_SIMPLE_ESCAPES = {"0": "\0", "'": "'", '"': '"', "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "\\": "\\"}
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|[0-7]{3}|.)", re.DOTALL)


def hive_unescape(quoted: str) -> str:
    """A quoted literal's value as ``BaseSemanticAnalyzer.unescapeSQLString`` reads it: ``\\uXXXX``, three octal
    digits, the usual escapes; ``\\%`` and ``\\_`` keep their backslash; any other escaped character is itself."""

    def one(match: re.Match[str]) -> str:
        escaped = match.group(1)
        if len(escaped) == 5 and escaped[0] == "u":
            return chr(int(escaped[1:], 16))
        if len(escaped) == 3:
            return chr(int(escaped, 8))
        if escaped in "%_":
            return "\\" + escaped
        return _SIMPLE_ESCAPES.get(escaped, escaped)

    return _ESCAPE.sub(one, quoted[1:-1])


class CreateTableClauses:
    """``CREATE [EXTERNAL] TABLE [IF NOT EXISTS] [db.]t (…) …`` and ``… LIKE [db.]s [LOCATION '…']``."""

    text: str

    def create_table(self: Any) -> CreateTable:
        self.expect_words("CREATE")
        if self.words(1) == ("TEMPORARY",):
            raise self.unsupported("CREATE TEMPORARY TABLE", "temporary tables live in a Hive session, not the console")
        external = self.accept_words("EXTERNAL")
        self.expect_words("TABLE")
        if_not_exists = self.accept_words("IF", "NOT", "EXISTS")
        target: TableRef = self.table_ref()
        head = {"target": target, "external": external, "if_not_exists": if_not_exists}
        if self.accept_words("LIKE"):
            like = self.table_ref()
            location = self.string() if self.accept_words("LOCATION") else None
            return CreateTable(**head, like=like, location=location)
        self.refuse_create_clause()
        columns = self.column_list()
        return CreateTable(**head, columns=columns, **self.table_clauses())

    def table_clauses(self: Any) -> dict[str, Any]:
        """The optional clauses, each at most once and in Hive's order."""
        clauses: dict[str, Any] = {}
        if self.accept_words("COMMENT"):
            clauses["comment"] = self.string()
        self.refuse_create_clause()
        if self.accept_words("PARTITIONED", "BY"):
            clauses["partition_keys"] = self.column_list()
        if self.accept_words("CLUSTERED", "BY"):
            clauses.update(self.bucketing())
        self.refuse_create_clause()
        if self.accept_words("ROW", "FORMAT"):
            clauses.update(self.row_format())
        self.refuse_create_clause()
        if self.accept_words("STORED", "AS"):
            clauses.update(self.stored_as())
        if self.accept_words("LOCATION"):
            clauses["location"] = self.string()
        if self.accept_words("TBLPROPERTIES"):
            clauses["properties"] = self.properties()
        self.refuse_create_clause()
        return clauses

    def bucketing(self: Any) -> dict[str, Any]:
        bucket_columns = tuple(c.lower() for c in self.parenthesized(self.identifier))
        sort_columns: tuple[tuple[str, int], ...] = ()
        if self.accept_words("SORTED", "BY"):
            sort_columns = tuple(self.parenthesized(self.sort_column))
        self.expect_words("INTO")
        token = self.peek()
        if token.kind != "number" or not token.text.isdigit() or int(token.text) < 1:
            raise self.error(f"expected a positive number of buckets after INTO, found {self.describe(token)}")
        self.advance()
        self.expect_words("BUCKETS")
        return {"bucket_columns": bucket_columns, "sort_columns": sort_columns, "buckets": int(token.text)}

    def sort_column(self: Any) -> tuple[str, int]:
        """A sort column and its order as SORT_COLS.ORDER keeps it: 1 ascending (the default), 0 descending."""
        name = self.identifier().lower()
        if self.accept_words("DESC"):
            return name, 0
        self.accept_words("ASC")
        return name, 1

    def row_format(self: Any) -> dict[str, Any]:
        if self.accept_words("SERDE"):
            serde = self.hive_string()
            properties: tuple[tuple[str, str], ...] = ()
            if self.accept_words("WITH", "SERDEPROPERTIES"):
                properties = self.hive_properties()
            return {"serde": serde, "serde_properties": properties}
        self.expect_words("DELIMITED")
        delimited: list[tuple[str, str]] = []
        for words, clause in _DELIMITED:
            if self.accept_words(*words):
                delimited.append((clause, self.hive_string()))
        if not delimited:
            raise self.error(f"expected FIELDS, ESCAPED, COLLECTION ITEMS, MAP KEYS, LINES or NULL after ROW FORMAT "
                             f"DELIMITED, found {self.describe(self.peek())}")  # fmt: skip
        return {"row_format": tuple(delimited)}

    def stored_as(self: Any) -> dict[str, Any]:
        if self.accept_words("INPUTFORMAT"):
            input_format = self.hive_string()
            self.expect_words("OUTPUTFORMAT")
            return {"input_format": input_format, "output_format": self.hive_string()}
        token = self.peek()
        name = self.peek_word()
        if name not in STORED_AS_FORMATS:
            raise DdlParseError(
                self.text,
                token.position,
                f"STORED AS {token.text or '…'}: the console creates tables STORED AS {', '.join(STORED_AS_FORMATS)} "
                "or INPUTFORMAT '…' OUTPUTFORMAT '…'",
                unsupported=f"STORED AS {name}" if name else "",
            )
        self.advance()
        return {"stored_as": name}

    def hive_string(self: Any) -> str:
        token = self.peek()
        if token.kind != "string":
            raise self.error(f"expected a quoted string, found {self.describe(token)}")
        self.advance()
        return hive_unescape(token.text)

    def hive_properties(self: Any) -> tuple[tuple[str, str], ...]:
        def pair() -> tuple[str, str]:
            key = self.hive_string()
            self.expect_op("=")
            return key, self.hive_string()

        return tuple(self.parenthesized(pair))

    def refuse_create_clause(self: Any) -> None:
        for starts, clause in _UNSUPPORTED.items():
            if self.words(len(starts)) == starts:
                problem = f"CREATE TABLE … {clause} is Hive DDL that the console does not run; use Hive for it"
                raise self.unsupported(clause, problem)
