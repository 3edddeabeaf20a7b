"""
Merge input validated like the console's own input, set-based over the source: names by the target version's rules
(Hive's ``validateName``) and the console's safe directory names (``operations.rules.check_table_name``), locations
(after the merge's location rules) safe and inside the target's governed roots as ``SET LOCATION`` checks them
(``operations.containment``), and values within the widths of the target schema's columns.

Each check is SQL over the chosen databases' rows: a predicate keeping every possible offender (exact for widths; a
coarse regular expression for names and locations, which SQL cannot check exactly), then the exact rule in Python on
those candidates only. One :class:`MergeBlocker` per kind of offence holds the total count and the first
:data:`SHOWN` offenders (smallest first), shortened and escaped, so the stored preview stays small whatever the source
holds.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from catalog_admin.hive.names import directory_name_problems, is_valid_name
from catalog_admin.hive.versions import SchemaVersion
from catalog_admin.selectors.locations import location_spellings
from catalog_admin.selectors.metastores import Metastore
from operations.containment import GovernedRoots, canonical, governed_roots, is_inside, unsafe_path
from operations.merge.plan import DatabaseImport, MergeBlocker
from operations.merge.reads import MetastoreReader
from operations.merge.request import MergeRequest
from operations.merge.scope import CARRIED_TABLES

__all__ = ("SHOWN", "Offenders", "input_blockers", "shown")

SHOWN = 5  # offenders named per kind; the others are counted
SHOWN_CHARACTERS = 80  # of a name, location or value in a message
PLAIN_NAME = "^[A-Za-z0-9_]+$"  # valid on every Hive version and a safe directory name
# A path segment that is surely safe (no '.' or '..', '?', '#', control character; '%' only as an escape) and a
# scheme with its authority: a location made of these needs no exact check for containment.unsafe_path.
_SEGMENT = r"/([^/?#%.\x01-\x1f\x7f]|%[0-9A-Fa-f]{2})([^/?#%\x01-\x1f\x7f]|%[0-9A-Fa-f]{2})*"
_ANY_PREFIX = r"([A-Za-z][A-Za-z0-9+.-]*:(//[^/?#%\x01-\x1f\x7f]*)?)?"
_SAFE = f"^{_ANY_PREFIX}({_SEGMENT})+/?$"  # a table's or partition's location: one segment at least
_SAFE_AT_ROOT = f"^{_ANY_PREFIX}({_SEGMENT})*/?$"  # a database's
_UNMOVED = "^(/[^/]|[A-Za-z][A-Za-z0-9+.-]*:/).*[A-Za-z0-9_=.%-]$"  # a spelling normalize_location leaves as it is
_NORMALIZING = len("file:")  # normalize_location turns '/x' into 'file:/x'
# Location columns, each checked after the location rules (DBS: a database may sit at a root itself, as Hive's default
# database sits at the warehouse root; a table or partition lies strictly inside one).
LOCATIONS = (("DBS", "DB_LOCATION_URI"), ("DBS", "MANAGEDLOCATIONURI"), ("SDS", "LOCATION"))
CHECKED_ELSEWHERE = {("DBS", "NAME"), *LOCATIONS}  # renamed or rewritten on the way: checked as names, locations


@dataclass
class Offenders:
    """One kind of offence: how many, and the first :data:`SHOWN` in text order (a repeated preview names the same)."""

    code: str
    noun: str
    count: int = 0
    first: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.count += 1
        if len(self.first) < SHOWN or text < self.first[-1]:
            bisect.insort(self.first, text)
            del self.first[SHOWN:]

    def blockers(self, what: str) -> list[MergeBlocker]:
        if not self.count:
            return []
        more = f"; and {self.count - len(self.first):,} more" if self.count > len(self.first) else ""
        subject = f"{self.count:,} {self.noun}"
        return [MergeBlocker(self.code, subject, f"{subject} {what}: {'; '.join(self.first)}{more}.")]


def input_blockers(
    request: MergeRequest,
    target: Metastore,
    src: MetastoreReader,
    tgt: MetastoreReader,
    databases: tuple[DatabaseImport, ...],
    ids: tuple[int, ...],
) -> list[MergeBlocker]:
    """Blockers for names, locations and values the target would refuse or that would escape its directories."""
    version, roots = target.schema.version, governed_roots(target)
    names = _name_offenders(request, version, src, tgt, databases, ids)
    unsafe, outside = _location_offenders(request, roots, src, tgt, databases, ids)
    wide = _width_offenders(src, tgt, ids)
    return [
        *names.blockers(f"are refused (Hive {version}'s validateName, and names that must make one safe directory)"),
        *unsafe.blockers("are refused (after the location rules)"),
        *outside.blockers(
            f"would lie outside the directories the target governs ({roots.describe()}): add a location rule into "
            "one of them"
        ),
        *wide.blockers("are longer than the target schema's columns hold"),
    ]


def shown(text: str) -> str:
    """``text`` for a message: quoted, unprintable characters escaped (``\\x07``, ``\\n``), never raw, and when longer
    than :data:`SHOWN_CHARACTERS` its start and end (where a location's own part is) with its full length."""
    if len(text) <= SHOWN_CHARACTERS:
        return f"'{_escaped(text)}'"
    head = SHOWN_CHARACTERS // 3
    cut = f"{_escaped(text[:head])}…{_escaped(text[head - SHOWN_CHARACTERS :])}"
    return f"'{cut}' ({len(text):,} characters)"


def _escaped(text: str) -> str:
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


# Names ------------------------------------------------------------------------------------------------------------


def _name_offenders(
    request: MergeRequest,
    version: SchemaVersion,
    src: MetastoreReader,
    tgt: MetastoreReader,
    databases: tuple[DatabaseImport, ...],
    ids: tuple[int, ...],
) -> Offenders:
    """Databases (as they arrive) and tables whose name Hive or the console would refuse."""
    offenders = Offenders("unsafe_name", "names")
    width = tgt.text_widths("DBS").get("NAME")
    for database in databases:
        problems = _name_problems(database.new_name, version)
        if width and len(database.new_name) > width:
            problems.append(f"longer than the target's {width} characters")
        if problems:
            offenders.add(f"database {shown(database.new_name)} ({', '.join(problems)})")
    sql = (
        'SELECT d."NAME", t."TBL_NAME" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
        f'WHERE t."DB_ID" IN ({_ids(ids)}) AND NOT ({_matches(src, _column("t", "TBL_NAME"))})'
    )
    for database, table in src.rows(sql, [PLAIN_NAME]):
        problems = _name_problems(table, version)
        if problems:
            offenders.add(f"table {shown(request.new_name(database.lower()))}.{shown(table)} ({', '.join(problems)})")
    return offenders


def _name_problems(name: str, version: SchemaVersion) -> list[str]:
    valid = [] if is_valid_name(name, version) else [f"not a valid object name on Hive {version}"]
    return valid + list(directory_name_problems(name))


# Locations --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Column:
    """A location column as checked: its target width and whether a row may sit at a root itself."""

    width: int | None
    at_root: bool


def _location_offenders(
    request: MergeRequest,
    roots: GovernedRoots,
    src: MetastoreReader,
    tgt: MetastoreReader,
    databases: tuple[DatabaseImport, ...],
    ids: tuple[int, ...],
) -> tuple[Offenders, Offenders]:
    """Locations (after the rules) that are unsafe or too long, and those outside the target's roots (unless its
    configuration allows them, as for ``SET LOCATION``)."""
    unsafe, outside = Offenders("unsafe_location", "locations"), Offenders("outside_roots", "locations")
    arriving = {d.name: d.new_name for d in databases}
    growth = max([0, *(len(r.new) - len(r.old) for r in request.location_rules)]) + _NORMALIZING
    for table, column in LOCATIONS:
        if not (column in src.columns(table) and column in tgt.columns(table)):
            continue
        checked = _Column(tgt.text_widths(table).get(column), at_root=table == "DBS")
        value = _column("d" if table == "DBS" else "s", column)
        doubtful, params = _doubtful(src, value, request, roots, checked, growth)
        surely, surely_params = _surely_outside(src, "x.loc", request, roots, checked, growth)
        rows = src.rows(_location_statement(table, value, ids, doubtful, surely), [*surely_params, *params])
        proven = [row for row in rows if row[4]]  # SQL counted them and returns the first few: no row each in Python
        outside.count += int(proven[0][5]) - len(proven) if proven else 0
        for database, within, partition, location, sure, _count, _rank in rows:
            owner = _owner(request, arriving, database, within, partition)
            new = request.rewrite(location) or ""
            problem, inside = (None, False) if sure else _location_problem(new, roots, checked)
            if problem:
                unsafe.add(f"{owner} at {shown(new)} ({problem})")
            elif not inside:
                outside.add(f"{owner} at {shown(new)}")
    return unsafe, outside


def _owner(
    request: MergeRequest, arriving: dict[str, str], database: str, table: str | None, partition: str | None
) -> str:
    """Whose location it is, as it would arrive: ``database 'name'``, ``'db.table'`` or ``'db.table/partition'``."""
    name = arriving.get(database.lower()) or request.new_name(database.lower())
    if table is None:
        return f"database {shown(name)}"
    return shown(f"{name}.{table}" + (f"/{partition}" if partition else ""))


def _location_problem(location: str, roots: GovernedRoots, checked: _Column) -> tuple[str | None, bool]:
    """The exact check of one rewritten location: why it is unsafe (None: it is not), and whether it is governed."""
    problem = unsafe_path(location)
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in location):
        problem = "it contains a control character"
    elif problem is None and checked.width and len(location) > checked.width:
        problem = f"{len(location):,} characters, more than the target's {checked.width:,}"
    inside = roots.allow_outside or any(is_inside(location, r, strictly=not checked.at_root) for r in roots.locations)
    return problem, inside


def _location_statement(table: str, value: str, ids: tuple[int, ...], doubtful: str, surely: str) -> str:
    """A statement returning (database, table, partition, location, sure, sure count, rank) of the chosen databases'
    ``doubtful`` locations (table and partition NULL for a database's own): every one SQL does not prove outside the
    roots (``surely``, on ``x.loc``), and of those it does their count and the first :data:`SHOWN`."""
    marked = (
        "SELECT x.db, x.tbl, x.part, x.loc, CASE WHEN " + surely + " THEN 1 ELSE 0 END AS sure "
        f"FROM ({_locations(table, value, ids, doubtful)}) x"
    )
    ranked = (
        "SELECT m.*, SUM(m.sure) OVER () AS sure_count, ROW_NUMBER() OVER (PARTITION BY m.sure ORDER BY m.db, "
        f"m.tbl, m.part) AS n FROM ({marked}) m"
    )
    return f"SELECT * FROM ({ranked}) r WHERE r.sure = 0 OR r.n <= {SHOWN}"


def _locations(table: str, value: str, ids: tuple[int, ...], condition: str) -> str:
    """(db, tbl, part, loc) of the chosen databases' locations meeting ``condition``; the storage descriptors of
    tables and partitions read in one scan."""
    where = f"{value} IS NOT NULL AND {value} <> '' AND ({condition})"
    if table == "DBS":
        columns = f'd."NAME" AS db, NULL AS tbl, NULL AS part, {value} AS loc'
        return f'SELECT {columns} FROM "DBS" d WHERE d."DB_ID" IN ({_ids(ids)}) AND {where}'
    tables = 'FROM "DBS" d JOIN "TBLS" t ON t."DB_ID" = d."DB_ID"'
    chosen = f'WHERE d."DB_ID" IN ({_ids(ids)})'
    owners = (
        f'SELECT d."NAME" AS db, t."TBL_NAME" AS tbl, p."PART_NAME" AS part, p."SD_ID" AS sd {tables} '
        f'JOIN "PARTITIONS" p ON p."TBL_ID" = t."TBL_ID" {chosen} '
        f'UNION ALL SELECT d."NAME", t."TBL_NAME", NULL, t."SD_ID" {tables} {chosen}'
    )
    descriptors = f'({owners}) o JOIN "SDS" s ON s."SD_ID" = o.sd'
    return f"SELECT o.db, o.tbl, o.part, {value} AS loc FROM {descriptors} WHERE {where}"


def _doubtful(
    src: MetastoreReader, value: str, request: MergeRequest, roots: GovernedRoots, checked: _Column, growth: int
) -> tuple[str, list]:
    """The SQL condition (and its parameters) keeping every location the exact check could refuse: one not made of
    plainly safe segments, one outside every governed prefix (the outermost roots, and the rules leading into them),
    one under a rule leading elsewhere, and one that may be too long after the rules. A location it leaves out
    surely passes. Prefixes are compared with LIKE (a long regular-expression alternation costs PostgreSQL 70 µs a
    row)."""
    conditions, params = [f"NOT ({_matches(src, value)})"], [_SAFE_AT_ROOT if checked.at_root else _SAFE]
    rules = sorted(request.location_rules, key=lambda r: -len(r.old))
    refused = [r.old for r in rules if not _governed(r.new, roots)]
    if not roots.allow_outside:
        governed = [r.old for r in rules if _governed(r.new, roots)]
        under, under_params = _under_any(value, _outermost([*governed, *roots.locations]), strictly=not checked.at_root)
        conditions.append(f"NOT ({under})")
        params += under_params
    if refused:
        under, under_params = _under_any(value, refused, strictly=False)
        conditions.append(under)
        params += under_params
    if checked.width:
        conditions.append(f"{_length(src, value)} > %s")
        params.append(checked.width - growth)
    return " OR ".join(conditions), params


def _surely_outside(
    src: MetastoreReader, value: str, request: MergeRequest, roots: GovernedRoots, checked: _Column, growth: int
) -> tuple[str, list]:
    """The SQL condition (and parameters) of locations SQL alone proves outside the roots: plainly safe, stored in a
    spelling that normalizing does not move (``/x``, ``scheme:/x``, ``scheme://host/x``, but not ``file://…``, and
    ending in no whitespace), under no rule and no governed prefix, short enough. ``1 = 0`` where outside locations
    are allowed."""
    if roots.allow_outside:
        return "1 = 0", []
    unmoved = f"({_matches(src, value)}) AND NOT ({value} LIKE %s)"
    outer = _outermost(list(roots.locations))
    under_roots, root_params = _under_any(value, outer, strictly=not checked.at_root)
    under_rules, rule_params = _under_any(value, [r.old for r in request.location_rules], strictly=False)
    conditions = [f"{_matches(src, value)}", unmoved, f"NOT ({under_roots})", f"NOT ({under_rules})"]
    params: list = [_SAFE_AT_ROOT if checked.at_root else _SAFE, _UNMOVED, "file://%", *root_params, *rule_params]
    if checked.width:
        conditions.append(f"{_length(src, value)} <= %s")
        params.append(checked.width - growth)
    return " AND ".join(conditions), params


def _under_any(value: str, locations: list[str], *, strictly: bool) -> tuple[str, list]:
    """``value`` is (unless ``strictly``) or lies under one of ``locations`` in one of their spellings."""
    spellings = sorted({s for location in locations for s in location_spellings(location)})
    if not spellings:
        return "1 = 0", []
    conditions, params = [], []
    for spelling in spellings:
        if not strictly:
            conditions.append(f"{value} = %s")
            params.append(spelling)
        conditions.append(f"{value} LIKE %s")
        params.append(_like(spelling.rstrip("/")) + ("/_%" if strictly else "/%"))
    return " OR ".join(conditions), params


def _outermost(locations: list[str]) -> list[str]:
    """``locations`` without those inside another of them (a database inside the warehouse adds nothing)."""
    kept: list[str] = []
    for location in sorted({canonical(location) for location in locations}, key=len):
        if not any(is_inside(location, outer) for outer in kept):
            kept.append(location)
    return kept


def _governed(location: str, roots: GovernedRoots) -> bool:
    inside = roots.allow_outside or any(is_inside(location, r) for r in roots.locations)
    return inside and unsafe_path(location) is None


def _like(text: str) -> str:
    """``text`` as a LIKE pattern matching itself (backslash, the default escape character, before '%' and '_')."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# Widths -----------------------------------------------------------------------------------------------------------


def _width_offenders(src: MetastoreReader, tgt: MetastoreReader, ids: tuple[int, ...]) -> Offenders:
    """Rows with a value longer than the target's column holds, for every carried text column the target declares
    narrower than the source's (both schemas' own widths): one statement per such table, its count and first rows."""
    offenders = Offenders("value_too_long", "values")
    for table in CARRIED_TABLES:
        if not (src.has_table(table.name) and tgt.has_table(table.name)):
            continue
        narrower = _narrower_columns(src, tgt, table.name)
        if not narrower:
            continue
        key = "PARAM_KEY" if "PARAM_KEY" in src.columns(table.name) else table.scope_column  # names the row
        lengths = [_length(src, _column(None, column)) for column in narrower]
        over = " OR ".join(f"{length} > {width}" for length, width in zip(lengths, narrower.values(), strict=True))
        sql = (
            f'SELECT COUNT(*) OVER (), "{table.scope_column}", "{key}", {", ".join(lengths)} FROM "{table.name}" '
            f"WHERE {table.where(_ids(ids))} AND ({over}) ORDER BY 2, 3 LIMIT {SHOWN}"
        )
        rows = src.rows(sql)
        for _total, scope, name, *found in rows:
            columns = [
                f"{table.name}.{column} {length:,} characters, the target holds {width:,}"
                for (column, width), length in zip(narrower.items(), found, strict=True)
                if length and length > width
            ]
            named = f" ({key} {shown(str(name))})" if key != table.scope_column else ""
            offenders.add(f"{table.scope_column} {scope}{named}: {', '.join(columns)}")
        offenders.count += int(rows[0][0]) - len(rows) if rows else 0
    return offenders


def _narrower_columns(src: MetastoreReader, tgt: MetastoreReader, table: str) -> dict[str, int]:
    """Text columns whose target width is below the source's (or the source's is unbounded): column → target width."""
    source, target = src.text_widths(table), tgt.text_widths(table)
    compared = {c: w for c, w in target.items() if w and c in source and (table, c) not in CHECKED_ELSEWHERE}
    return {column: width for column, width in compared.items() if (source[column] or width + 1) > width}


# SQL pieces ---------------------------------------------------------------------------------------------------------


def _column(alias: str | None, column: str) -> str:
    return f'{alias}."{column}"' if alias else f'"{column}"'


def _matches(reader: MetastoreReader, value: str) -> str:
    """``value`` matches the regular expression of the next parameter, case-sensitively."""
    return f"{value} ~ %s" if reader.vendor == "postgresql" else f"BINARY {value} REGEXP %s"


def _length(reader: MetastoreReader, value: str) -> str:
    return f"CHAR_LENGTH({value})" if reader.vendor in ("postgresql", "mysql") else f"LENGTH({value})"


def _ids(ids: tuple[int, ...]) -> str:
    return ", ".join(str(int(i)) for i in ids) or "NULL"
