"""
A parser for the ALTER TABLE (and ALTER VIEW) statements the console supports, as a steward types them in Beeline.

``parse_alter(text)`` returns an :class:`~operations.specs.AlterSpec`; on bad input it raises
:class:`DdlParseError` pointing at the position and listing the supported statements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from catalog_admin.schema import SchemaVersion
from operations.ddl.analyze import analyze_statement
from operations.ddl.create_table import CreateTableClauses
from operations.ddl.database_parser import is_database_statement, parse_database_statement
from operations.ddl.errors import SUPPORTED_STATEMENTS, VIEW_TEXT_REFUSAL, DdlParseError
from operations.ddl.types import TypeGrammar, grammar_for, read_type
from operations.specs import (
    COMPACT_OPTIONS,
    AbortTransactions,
    AddColumns,
    AddPartitions,
    AlterSpec,
    ChangeColumn,
    ColumnDef,
    CompactFiles,
    CompactTable,
    ConvertFormat,
    DropPartitions,
    DropTable,
    ExchangePartition,
    NewPartition,
    PartitionPredicate,
    PurgeTrash,
    Relocate,
    RenamePartition,
    RenameTable,
    RepairPartitions,
    ReplaceColumns,
    RewritePartitionLocations,
    SetFileFormat,
    SetLocation,
    SetOwner,
    SetSerdeProperties,
    SetTableProperties,
    TableRef,
    TruncateTable,
    UnsetTableProperties,
)

__all__ = ("SUPPORTED_STATEMENTS", "DdlParseError", "parse_alter")

# Hive DDL the console recognises but does not run, by the words that start it (after ``ALTER TABLE t`` or after
# ``ALTER TABLE t PARTITION (…)``; Hive's alterTableStatementSuffix and alterTblPartitionStatementSuffix, 2.3 to 4.0),
# so that a steward is told "not supported" rather than "cannot parse".
UNSUPPORTED_TABLE_CLAUSES: dict[tuple[str, ...], str] = {
    ("ADD", "CONSTRAINT"): "ADD CONSTRAINT",
    ("DROP", "CONSTRAINT"): "DROP CONSTRAINT",
    ("CLUSTERED",): "CLUSTERED BY",
    ("NOT", "CLUSTERED"): "NOT CLUSTERED",
    ("SKEWED",): "SKEWED BY",
    ("NOT", "SKEWED"): "NOT SKEWED",
    ("NOT", "STORED"): "NOT STORED AS DIRECTORIES",
    ("NOT", "SORTED"): "NOT SORTED",
    ("INTO",): "INTO … BUCKETS",
    ("PARTITION", "COLUMN"): "PARTITION COLUMN (a partition key's type)",
    ("SET", "SERDE"): "SET SERDE",
    ("SET", "SKEWED"): "SET SKEWED LOCATION",
    ("SET", "PARTITION"): "SET PARTITION SPEC",
    ("TOUCH",): "TOUCH",
    ("ARCHIVE",): "ARCHIVE PARTITION",
    ("UNARCHIVE",): "UNARCHIVE PARTITION",
    ("RECOVER",): "RECOVER PARTITIONS",
    ("UPDATE",): "UPDATE STATISTICS / UPDATE COLUMNS",
    ("EXECUTE",): "EXECUTE",
    ("CONVERT",): "CONVERT TO ICEBERG",
    ("CREATE",): "CREATE BRANCH / CREATE TAG",
    ("DROP", "BRANCH"): "DROP BRANCH",
    ("DROP", "TAG"): "DROP TAG",
}
UNSUPPORTED_PARTITION_CLAUSES: dict[tuple[str, ...], str] = {
    ("ADD", "COLUMNS"): "PARTITION (…) ADD COLUMNS",
    ("REPLACE", "COLUMNS"): "PARTITION (…) REPLACE COLUMNS",
    ("CHANGE",): "PARTITION (…) CHANGE COLUMN",
    ("SET", "SERDE"): "PARTITION (…) SET SERDE",
    ("SET", "SERDEPROPERTIES"): "PARTITION (…) SET SERDEPROPERTIES",
    ("CLUSTERED",): "PARTITION (…) CLUSTERED BY",
    ("NOT",): "PARTITION (…) NOT CLUSTERED / NOT SORTED / NOT SKEWED",
    ("INTO",): "PARTITION (…) INTO … BUCKETS",
    ("SET", "SKEWED"): "PARTITION (…) SET SKEWED LOCATION",
    ("TOUCH",): "PARTITION (…) TOUCH",
    ("ARCHIVE",): "PARTITION (…) ARCHIVE",
    ("UNARCHIVE",): "PARTITION (…) UNARCHIVE",
    ("UPDATE",): "PARTITION (…) UPDATE STATISTICS / UPDATE COLUMNS",
}
# The formats ``SET FILEFORMAT … WITH DATA`` rewrites data into (Hive's fileFormat names them, among others).
CONVERTIBLE_FORMATS = ("PARQUET", "ORC", "AVRO")
# Hive's other fileFormat words: metadata-only SET FILEFORMAT to them is Hive's to run.
OTHER_FORMATS = ("TEXTFILE", "SEQUENCEFILE", "RCFILE", "JSONFILE", "INPUTFORMAT")

# Mistakes worth a hint: statements Hive itself does not have.
NOT_HIVE: dict[tuple[str, ...], str] = {
    ("DROP", "COLUMN"): "Hive has no DROP COLUMN: REPLACE COLUMNS (…) with the columns to keep drops the others",
    ("RENAME", "COLUMN"): "Hive has no RENAME COLUMN: CHANGE [COLUMN] old new type renames a column",
    ("ALTER", "COLUMN"): "Hive has no ALTER COLUMN: CHANGE [COLUMN] old new type changes a column",
    ("MODIFY",): "Hive has no MODIFY: CHANGE [COLUMN] old new type changes a column",
}

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|--[^\n]*)
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<quoted>`(?:[^`]|``)*`)
  | (?P<number>-?\d+(?:\.\d+)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><=|>=|<>|!=|[(),.=<>;:])
    """,
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}
# The words that may follow a column's type: its comment, its place (CHANGE) and the end of ADD/REPLACE COLUMNS.
TYPE_FOLLOWERS = frozenset({"COMMENT", "FIRST", "AFTER", "CASCADE", "RESTRICT"})


@dataclass(frozen=True)
class Token:
    kind: str  # string | quoted | number | word | op | end
    text: str
    value: str
    position: int


def parse_alter(
    statement: str, *, default_database: str = "default", version: SchemaVersion | None = None
) -> AlterSpec:
    """Parse one ALTER TABLE statement into its spec; column types in ``version``'s grammar (None: any line's)."""
    return _Parser(statement, default_database, grammar_for(version)).statement()


class _Parser(CreateTableClauses):
    def __init__(self, text: str, default_database: str, grammar: TypeGrammar) -> None:
        self.text = text
        self.default_database = default_database
        self.grammar = grammar
        self.tokens, self.refused = _tokens_until_refused(text)  # a view's query may hold any character
        self.i = 0

    # Grammar ------------------------------------------------------------------------------------

    def statement(self) -> AlterSpec:
        self.refuse_view_definition()
        if self.refused is not None:
            raise self.refused
        if self.peek().kind == "end":
            raise self.error("the statement is empty; expected ALTER TABLE …")
        first, second = (self.words(2) + ("",))[:2]
        if first == "CREATE" and second in ("TABLE", "EXTERNAL", "TEMPORARY"):
            return self.end(self.create_table())
        if is_database_statement((first, second)):  # CREATE/ALTER/DROP DATABASE (issue 27)
            return self.end(parse_database_statement(self))
        if first == "MSCK":
            return self.end(self.msck())
        if first == "DROP" and second in ("TABLE", "VIEW"):
            return self.end(self.drop_table())
        if first == "TRUNCATE":
            return self.end(self.truncate())
        kind = first if first != "ALTER" else f"ALTER {second}" if second not in ("", "TABLE", "VIEW") else ""
        if first == "ANALYZE":
            return self.end(analyze_statement(self))
        if first and kind:
            raise self.unsupported(kind, f"{kind} is not an ALTER TABLE statement; the console runs ALTER TABLE only")
        if self.accept_words("ALTER", "VIEW"):
            spec = self.view_action(self.table_ref())
        else:
            self.expect_words("ALTER", "TABLE")
            spec = self.action(self.table_ref())
        return self.end(spec)

    def refuse_view_definition(self) -> None:
        """``CREATE [OR REPLACE] VIEW`` and ``ALTER VIEW v AS`` are refused naming why (README, "Views")."""
        words = self.words(4)
        if words[:2] == ("CREATE", "VIEW") or words == ("CREATE", "OR", "REPLACE", "VIEW"):
            clause = "CREATE VIEW" if words[1] == "VIEW" else "CREATE OR REPLACE VIEW"
            raise self.unsupported(clause, f"{clause} {VIEW_TEXT_REFUSAL}")
        if words[:2] == ("ALTER", "VIEW"):
            start = self.i
            self.i += 2
            try:
                self.table_ref()
                if self.words(1) == ("AS",):
                    raise self.unsupported("ALTER VIEW … AS", f"ALTER VIEW … AS {VIEW_TEXT_REFUSAL}")
            except DdlParseError as error:
                if error.details.get("unsupported"):
                    raise
            finally:
                self.i = start

    def end(self, spec: AlterSpec) -> AlterSpec:
        """``spec``, once nothing but an optional ``;`` follows it."""
        self.accept_op(";")
        if self.peek().kind != "end":
            raise self.error(f"unexpected {self.describe(self.peek())} after the end of the statement")
        return spec

    def msck(self) -> RepairPartitions:
        """``MSCK [REPAIR] TABLE t [ADD|DROP|SYNC PARTITIONS]`` (HiveParser.g's metastoreCheck; ADD by default)."""
        self.expect_words("MSCK")
        repair = self.accept_words("REPAIR")
        self.expect_words("TABLE")
        target = self.table_ref()
        mode = "add"
        if self.peek_word() in ("ADD", "DROP", "SYNC"):
            mode = self.advance().value.lower()
            self.expect_words("PARTITIONS")
        return RepairPartitions(target=target, mode=mode, repair=repair)

    def add_partitions(self, target: TableRef) -> AddPartitions:
        """``ADD [IF NOT EXISTS] PARTITION (k='v', …) [LOCATION '…'] [PARTITION (…) [LOCATION '…'] …]`` (HiveParser.g's
        alterStatementSuffixAddPartitions: the partitions follow each other without commas)."""
        self.expect_words("ADD")
        if_not_exists = self.accept_words("IF", "NOT", "EXISTS")
        additions: list[NewPartition] = []
        while self.peek_word() == "PARTITION" or not additions:
            self.expect_words("PARTITION")
            values = self.partition_spec()
            location = self.string() if self.accept_words("LOCATION") else None
            additions.append(NewPartition(values=values, location=location))
        return AddPartitions(target=target, additions=tuple(additions), if_not_exists=if_not_exists)

    def drop_table(self) -> DropTable:
        """``DROP TABLE [IF EXISTS] t [PURGE]`` / ``DROP VIEW [IF EXISTS] v`` (HiveParser.g: dropTableStatement,
        dropViewStatement; a view takes no PURGE)."""
        on_view = self.advance() and self.advance().value.upper() == "VIEW"
        if_exists = self.accept_words("IF", "EXISTS")
        target = self.table_ref()
        purge = not on_view and self.accept_words("PURGE")
        return DropTable(target=target, if_exists=if_exists, purge=purge, on_view=on_view)

    def purge_trash(self, target: TableRef) -> PurgeTrash:
        """Console extension: ``PURGE TRASH [OLDER THAN n DAYS]`` (the table's entries of the console's trash)."""
        self.expect_words("PURGE", "TRASH")
        if not self.accept_words("OLDER", "THAN"):
            return PurgeTrash(target=target)
        token = self.peek()
        if token.kind != "number" or not token.text.isdigit():
            raise self.error(f"expected a whole number of days after OLDER THAN, found {self.describe(token)}")
        self.advance()
        self.expect_words("DAYS")
        return PurgeTrash(target=target, older_than_days=int(token.text))

    def truncate(self) -> TruncateTable:
        """``TRUNCATE TABLE t [PARTITION (k='v', …)]`` (HiveParser's truncateTableStatement; its ``COLUMNS (…)``
        form, RCFile only, and 4.0's ``FORCE`` are Hive's own to run)."""
        self.expect_words("TRUNCATE", "TABLE")
        target = self.table_ref()
        partition = self.partition_spec() if self.accept_words("PARTITION") else ()
        if self.peek_word() in ("COLUMNS", "FORCE"):
            clause = f"TRUNCATE TABLE … {self.peek_word()}"
            raise self.unsupported(clause, f"{clause} is Hive DDL that the console does not run; use Hive for it")
        return TruncateTable(target=target, partition=partition)

    def action(self, target: TableRef) -> AlterSpec:
        self.refuse_known(UNSUPPORTED_TABLE_CLAUSES, "ALTER TABLE … ")
        word = self.peek_word()
        if word == "RENAME":
            self.expect_words("RENAME", "TO")
            return RenameTable(target=target, new=self.table_ref())
        if self.words(2) in (("ADD", "PARTITION"), ("ADD", "IF")):
            return self.add_partitions(target)
        if word in ("ADD", "REPLACE"):
            self.advance()
            self.expect_words("COLUMNS")
            columns = self.column_list()
            cls = AddColumns if word == "ADD" else ReplaceColumns
            return cls(target=target, columns=columns, cascade=self.cascade())
        if word == "CHANGE":
            return self.change_column(target)
        if word == "SET":
            return self.set_clause(target)
        if word == "UNSET":
            self.expect_words("UNSET", "TBLPROPERTIES")
            if_exists = self.accept_words("IF", "EXISTS")
            keys = self.parenthesized(self.string)
            return UnsetTableProperties(target=target, keys=tuple(keys), if_exists=if_exists)
        if word == "PARTITION":
            return self.partition_clause(target)
        if word == "DROP":
            return self.drop_partitions(target)
        if word == "COMPACT":
            return self.compact(target)
        if word == "CONCATENATE":
            return self.concatenate(target)
        if word == "ABORT":
            return self.abort_transactions(target)
        if word == "EXCHANGE":
            self.expect_words("EXCHANGE", "PARTITION")
            spec = self.partition_spec()
            self.expect_words("WITH", "TABLE")
            return ExchangePartition(target=target, partition=spec, source=self.table_ref())
        if word == "PURGE":
            return self.purge_trash(target)
        raise self.error(
            "expected RENAME, ADD COLUMNS, REPLACE COLUMNS, CHANGE, SET, UNSET, PARTITION, DROP, COMPACT, "
            "CONCATENATE, ABORT, EXCHANGE or PURGE TRASH, "
            f"found {self.describe(self.peek())}"
        )

    def view_action(self, target: TableRef) -> AlterSpec:
        """The ALTER VIEW forms the console runs: RENAME TO, SET and UNSET TBLPROPERTIES (HiveParser.g's
        alterViewStatementSuffix also has ADD/DROP PARTITION, for partitioned views, and AS SELECT)."""
        if self.words(1) == ("AS",):
            raise self.unsupported("ALTER VIEW … AS", f"ALTER VIEW … AS {VIEW_TEXT_REFUSAL}")
        if self.words(2) not in (("RENAME", "TO"), ("SET", "TBLPROPERTIES"), ("UNSET", "TBLPROPERTIES")):
            raise self.error(
                f"expected RENAME TO, SET TBLPROPERTIES or UNSET TBLPROPERTIES after ALTER VIEW, "
                f"found {self.describe(self.peek())}"
            )
        return replace(self.action(target), on_view=True)

    def change_column(self, target: TableRef) -> ChangeColumn:
        self.expect_words("CHANGE")
        self.accept_words("COLUMN")
        old = self.identifier()
        column = self.column_def()
        first = self.accept_words("FIRST")
        after = self.identifier() if not first and self.accept_words("AFTER") else None
        return ChangeColumn(
            target=target, old_name=old, column=column, first=first, after=after, cascade=self.cascade()
        )

    def set_clause(self, target: TableRef, partition: tuple[tuple[str, str], ...] = ()) -> AlterSpec:
        start = self.peek().position
        self.expect_words("SET")
        word = self.peek_word()
        if word == "LOCATION":
            self.advance()
            location = self.string()
            if self.accept_words("WITH", "DATA"):
                predicates = tuple(PartitionPredicate(key=k, op="=", value=v) for k, v in partition)
                return Relocate(target=target, location=location, partitions=predicates)
            return SetLocation(target=target, location=location, partition=partition)
        if word == "FILEFORMAT":
            predicates = tuple(PartitionPredicate(key=k, op="=", value=v) for k, v in partition)
            return self.file_format(target, predicates, start)
        if partition:
            raise self.error(
                f"expected LOCATION or FILEFORMAT after PARTITION (…) SET, found {self.describe(self.peek())}"
            )
        if word == "TBLPROPERTIES":
            self.advance()
            return SetTableProperties(target=target, properties=self.properties())
        if word == "SERDEPROPERTIES":
            self.advance()
            return SetSerdeProperties(target=target, properties=self.properties())
        if word == "OWNER":
            self.advance()
            kind = self.peek_word()
            if kind not in ("USER", "ROLE", "GROUP"):
                raise self.error(f"expected USER, ROLE or GROUP after SET OWNER, found {self.describe(self.peek())}")
            self.advance()
            return SetOwner(target=target, principal_type=kind, principal=self.identifier())
        raise self.error(
            f"expected TBLPROPERTIES, SERDEPROPERTIES, OWNER or LOCATION after SET, found {self.describe(self.peek())}"
        )

    def partition_clause(self, target: TableRef) -> AlterSpec:
        self.expect_words("PARTITION")
        if self.accept_words("LOCATIONS"):
            self.expect_words("REPLACE", "PREFIX")
            old = self.string()
            self.expect_words("WITH")
            return RewritePartitionLocations(target=target, old_prefix=old, new_prefix=self.string())
        predicates = tuple(self.parenthesized(self.predicate))
        if any(p.op != "=" for p in predicates):
            return self.relocate_range(target, predicates)
        spec = tuple((p.key, p.value) for p in predicates)
        self.refuse_known(UNSUPPORTED_PARTITION_CLAUSES, "ALTER TABLE … ")
        if self.peek_word() == "RENAME":
            self.expect_words("RENAME", "TO", "PARTITION")
            return RenamePartition(target=target, partition=spec, new_partition=self.partition_spec())
        if self.peek_word() == "SET":
            return self.set_clause(target, spec)
        if self.peek_word() == "COMPACT":
            return self.compact(target, spec)
        if self.peek_word() == "CONCATENATE":
            return self.concatenate(target, predicates)
        raise self.error(
            f"expected RENAME TO PARTITION, SET LOCATION, SET FILEFORMAT, COMPACT or CONCATENATE, found "
            f"{self.describe(self.peek())}"
        )

    def concatenate(self, target: TableRef, predicates: tuple[PartitionPredicate, ...] = ()) -> CompactFiles:
        """``CONCATENATE`` (HiveParser's alterStatementSuffixMergeFiles): Hive merges ORC/RCFile files only; the
        console rewrites any of Parquet, ORC, Avro and text as a Spark job (``planners/rewrite.py``). Its extension
        ``WITH ('min_files'='50', 'max_average_bytes'='…', 'target_file_bytes'='…')`` selects and sizes."""
        self.expect_words("CONCATENATE")
        if not self.accept_words("WITH"):
            return CompactFiles(target=target, partitions=predicates)
        start = self.peek().position
        options: dict[str, int] = {}
        for key, value in self.properties():
            if key not in COMPACT_OPTIONS:
                raise DdlParseError(self.text, start, f"CONCATENATE WITH takes {', '.join(COMPACT_OPTIONS)}, not "
                                    f"'{key}'")  # fmt: skip
            if not value.isdigit() or int(value) < 1:
                raise DdlParseError(self.text, start, f"{key} must be a positive whole number, not '{value}'")
            options[key] = int(value)
        return CompactFiles(target=target, partitions=predicates, **options)

    def file_format(self, target: TableRef, predicates: tuple[PartitionPredicate, ...], start: int) -> AlterSpec:
        """``SET FILEFORMAT PARQUET|ORC|AVRO [WITH DATA]``: Hive's metadata-only statement (alterStatementSuffix-
        FileFormat; its preview blocks it where existing files would become unreadable), or with ``WITH DATA`` the
        console's extension that rewrites the data too."""
        self.expect_words("FILEFORMAT")
        token = self.peek()
        name = self.peek_word()
        if name not in CONVERTIBLE_FORMATS + OTHER_FORMATS:
            raise self.error(f"expected a file format (PARQUET, ORC, AVRO, …) after SET FILEFORMAT, found "
                             f"{self.describe(token)}")  # fmt: skip
        if name in OTHER_FORMATS:
            raise DdlParseError(
                self.text,
                start,
                f"SET FILEFORMAT {name} is Hive DDL the console does not run; it converts data to "
                f"{', '.join(CONVERTIBLE_FORMATS)} with SET FILEFORMAT … WITH DATA",
                unsupported="SET FILEFORMAT",
            )
        self.advance()
        if not self.accept_words("WITH", "DATA"):
            if any(p.op != "=" for p in predicates):
                problem = ("a partition range (<, <=, >, >=, <>) is accepted only by SET FILEFORMAT … WITH DATA; "
                           "Hive's SET FILEFORMAT names one partition exactly")  # fmt: skip
                raise DdlParseError(self.text, start, problem)
            partition = tuple((p.key, p.value) for p in predicates)
            return SetFileFormat(target=target, file_format=name, partition=partition)
        return ConvertFormat(target=target, file_format=name, partitions=predicates)

    def abort_transactions(self, target: TableRef) -> AbortTransactions:
        """``ABORT TRANSACTIONS id [id …]`` (HiveParser's abortTransactionStatement: ids separated by spaces)."""
        self.expect_words("ABORT", "TRANSACTIONS")
        ids = []
        while self.peek().kind == "number":
            token = self.advance()
            if not token.text.isdigit():
                raise DdlParseError(
                    self.text, token.position, f"a transaction id is a positive integer, not {token.text}"
                )
            ids.append(int(token.text))
        if not ids:
            raise self.error(f"expected a transaction id after ABORT TRANSACTIONS, found {self.describe(self.peek())}")
        return AbortTransactions(target=target, txn_ids=tuple(sorted(set(ids))))

    def compact(self, target: TableRef, partition: tuple[tuple[str, str], ...] = ()) -> CompactTable:
        """``COMPACT 'major'|'minor'`` (HiveParser's alterStatementSuffixCompact; its AND WAIT, WITH OVERWRITE
        TBLPROPERTIES, POOL and Hive 4's 'rebalance' are Hive's own to run)."""
        self.expect_words("COMPACT")
        kind = self.peek()
        compaction_type = self.string().lower()
        if compaction_type not in ("major", "minor"):
            raise DdlParseError(
                self.text, kind.position, f"the compaction type must be 'major' or 'minor', not '{compaction_type}'"
            )
        if self.peek().kind == "word":
            clause = f"COMPACT … {self.peek_word()}"
            raise self.unsupported(clause, f"{clause} is Hive DDL that the console does not run; use Hive for it")
        return CompactTable(target=target, compaction_type=compaction_type, partition=partition)

    def relocate_range(self, target: TableRef, predicates: tuple[PartitionPredicate, ...]) -> AlterSpec:
        """A range of partitions (``PARTITION (dt < '2024-01-01')``) can only be relocated (``… WITH DATA``),
        concatenated or converted (``SET FILEFORMAT … WITH DATA``): the console's jobs, not Hive's statements."""
        if self.peek_word() == "CONCATENATE":
            return self.concatenate(target, predicates)
        if self.words(2) == ("SET", "FILEFORMAT"):
            start = self.advance().position
            return self.file_format(target, predicates, start)
        self.expect_words("SET", "LOCATION")
        location = self.string()
        if not self.accept_words("WITH", "DATA"):
            raise self.error(
                "a partition range (<, <=, >, >=, <>) is accepted only by SET LOCATION '…' WITH DATA; "
                "Hive's SET LOCATION names one partition exactly"
            )
        return Relocate(target=target, location=location, partitions=predicates)

    def drop_partitions(self, target: TableRef) -> DropPartitions:
        self.expect_words("DROP")
        if_exists = self.accept_words("IF", "EXISTS")
        specs = []
        while True:
            self.expect_words("PARTITION")
            specs.append(tuple(self.parenthesized(self.predicate)))
            if not self.accept_op(","):
                break
        purge = self.accept_words("PURGE")
        return DropPartitions(target=target, specs=tuple(specs), if_exists=if_exists, purge=purge)

    # Pieces -------------------------------------------------------------------------------------

    def table_ref(self) -> TableRef:
        first = self.identifier()
        if self.accept_op("."):
            return TableRef(database=first.lower(), table=self.identifier().lower())
        return TableRef(database=self.default_database, table=first.lower())

    def column_list(self) -> tuple[ColumnDef, ...]:
        return tuple(self.parenthesized(self.column_def))

    def column_def(self) -> ColumnDef:
        name = self.identifier()
        column_type = self.column_type()
        comment = self.string() if self.accept_words("COMMENT") else None
        return ColumnDef(name=name.lower(), type=column_type, comment=comment)

    def column_type(self) -> str:
        """A Hive type in the metastore's grammar (any supported line's before it is known), as Hive stores it:
        ``decimal(10,2)``, ``map<string,array<int>>`` (``operations.ddl.types``)."""
        start = self.peek()
        if start.kind not in ("word", "number"):
            raise self.error(f"expected a column type, found {self.describe(start)}")
        stored, end = read_type(self.text, start.position, self.grammar)
        while self.peek().kind != "end" and self.peek().position < end:
            if self.peek().position + len(self.peek().text) > end:  # an operator such as '>=' across the type's end
                raise DdlParseError(self.text, end, f"unexpected {self.text[end]!r} after the column type {stored}")
            self.advance()
        following = self.peek()
        if following.kind == "word" and following.value.upper() not in TYPE_FOLLOWERS:
            raise self.error(f"unexpected {self.describe(following)} after the column type {stored}")
        return stored

    def properties(self) -> tuple[tuple[str, str], ...]:
        def pair() -> tuple[str, str]:
            key = self.string()
            self.expect_op("=")
            return key, self.string()

        return tuple(self.parenthesized(pair))

    def partition_spec(self) -> tuple[tuple[str, str], ...]:
        def pair() -> tuple[str, str]:
            key = self.identifier().lower()
            self.expect_op("=")
            return key, self.literal()

        return tuple(self.parenthesized(pair))

    def predicate(self) -> PartitionPredicate:
        key = self.identifier().lower()
        token = self.peek()
        if token.text not in ("=", "<", ">", "<=", ">=", "<>", "!="):
            raise self.error(f"expected a comparison (=, <, <=, >, >=, <>) after {key}, found {self.describe(token)}")
        self.advance()
        return PartitionPredicate(key=key, op="<>" if token.text == "!=" else token.text, value=self.literal())

    def parenthesized(self, item):  # noqa: ANN001, ANN202 - a small combinator
        self.expect_op("(")
        items = [item()]
        while self.accept_op(","):
            items.append(item())
        self.expect_op(")")
        return items

    def cascade(self) -> bool:
        if self.accept_words("CASCADE"):
            return True
        self.accept_words("RESTRICT")
        return False

    def identifier(self) -> str:
        token = self.peek()
        if token.kind not in ("word", "quoted"):
            raise self.error(f"expected a name, found {self.describe(token)}")
        self.advance()
        return token.value

    def string(self) -> str:
        token = self.peek()
        if token.kind != "string":
            raise self.error(f"expected a quoted string, found {self.describe(token)}")
        self.advance()
        return token.value

    def literal(self) -> str:
        token = self.peek()
        if token.kind not in ("string", "number"):
            raise self.error(f"expected a value (quoted string or number), found {self.describe(token)}")
        self.advance()
        return token.value

    # Token helpers ------------------------------------------------------------------------------

    def peek(self) -> Token:
        return self.tokens[self.i]

    def peek_word(self) -> str:
        token = self.peek()
        return token.value.upper() if token.kind == "word" else ""

    def advance(self) -> Token:
        token = self.tokens[self.i]
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return token

    def accept_words(self, *words: str) -> bool:
        if all(
            self.tokens[min(self.i + n, len(self.tokens) - 1)].kind == "word"
            and self.tokens[min(self.i + n, len(self.tokens) - 1)].value.upper() == w
            for n, w in enumerate(words)
        ):
            for _ in words:
                self.advance()
            return True
        return False

    def expect_words(self, *words: str) -> None:
        for word in words:
            if self.peek_word() != word:
                raise self.error(f"expected {word}, found {self.describe(self.peek())}")
            self.advance()

    def accept_op(self, op: str) -> bool:
        if self.peek().kind == "op" and self.peek().text == op:
            self.advance()
            return True
        return False

    def expect_op(self, op: str) -> None:
        if not self.accept_op(op):
            raise self.error(f"expected '{op}', found {self.describe(self.peek())}")

    def words(self, count: int) -> tuple[str, ...]:
        """The next ``count`` tokens as upper-case words ('' for a token that is not a word)."""
        tokens = self.tokens[self.i : self.i + count]
        return tuple(t.value.upper() if t.kind == "word" else "" for t in tokens)

    def refuse_known(self, clauses: dict[tuple[str, ...], str], prefix: str) -> None:
        """Refuse Hive DDL the console does not run (and name it), or a common non-Hive form (with a hint)."""
        for starts, hint in NOT_HIVE.items():
            if self.words(len(starts)) == starts:
                raise self.error(hint)
        for starts, clause in clauses.items():
            if self.words(len(starts)) == starts:
                raise self.unsupported(
                    clause, f"{prefix}{clause} is Hive DDL that the console does not run; use Hive for it"
                )

    def unsupported(self, clause: str, problem: str) -> DdlParseError:
        return DdlParseError(self.text, self.peek().position, problem, unsupported=clause)

    def describe(self, token: Token) -> str:
        return "the end of the statement" if token.kind == "end" else f"'{token.text}'"

    def error(self, problem: str) -> DdlParseError:
        return DdlParseError(self.text, self.peek().position, problem)


def _tokenize(text: str) -> list[Token]:
    tokens, refused = _tokens_until_refused(text)
    if refused is not None:
        raise refused
    return tokens


def _tokens_until_refused(text: str) -> tuple[list[Token], DdlParseError | None]:
    """The tokens up to the first character no token takes, and the error naming it (``None``: all of them)."""
    tokens: list[Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            tokens.append(Token(kind="end", text="", value="", position=position))
            return tokens, DdlParseError(text, position, f"unexpected character {text[position]!r}")
        kind = match.lastgroup or ""
        raw = match.group()
        if kind != "ws":
            tokens.append(Token(kind=kind, text=raw, value=_token_value(kind, raw), position=position))
        position = match.end()
    tokens.append(Token(kind="end", text="", value="", position=len(text)))
    return tokens, None


def _token_value(kind: str, raw: str) -> str:
    if kind == "string":
        return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), raw[1:-1])
    if kind == "quoted":
        return raw[1:-1].replace("``", "`")
    return raw
