"""
Hive schema versions and what each one does, by name.

Every version-dependent rule in the console asks :class:`Capabilities` (``metastore.schema.capabilities``) instead of
comparing versions itself, so supporting a new Hive line is a change to this file only.

Boundaries follow Hive's schema upgrade chain
(``standalone-metastore/metastore-server/src/main/sql/*/upgrade.order.*``):
``2.3.0 → 3.0.0 → 3.1.0 → 3.2.0 → 4.0.0-alpha-1 → 4.0.0-alpha-2 → 4.0.0-beta-1 → 4.0.0``. There is no 3.0.0
pre-release schema, so the 3.x line starts at :data:`HIVE_3` = ``3.0.0`` (the ``3.0.0-alpha-1`` boundary that
``planners/partitions.py`` used sorted the same for every real schema, but named a version Hive never had). The 4.x
line starts at its first schema, :data:`HIVE_4` = ``4.0.0-alpha-1``; the statistics tables lost their name columns only
in the 4.0.0 release (HIVE-27725, ``upgrade-4.0.0-beta-1-to-4.0.0``), hence :data:`HIVE_4_0_0`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, fields
from functools import total_ordering

__all__ = (
    "HIVE_3",
    "HIVE_4",
    "HIVE_4_0_0",
    "SUPPORTED_LINES",
    "Capabilities",
    "SchemaVersion",
    "UnsupportedSchemaVersion",
)

# Release lines the console is tested against (official scripts in ../shared).
SUPPORTED_LINES = ((2, 3), (3, 1), (4, 0))
_VERSION_PATTERN = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([A-Za-z]+)-?(\d+)?)?$")


class UnsupportedSchemaVersion(Exception):
    """The metastore's VERSION row names a schema the console cannot read safely."""

    def __init__(self, raw: str, metastore: str = "") -> None:
        where = f"Metastore '{metastore}'" if metastore else "The metastore"
        lines = ", ".join(f"{major}.{minor}.x" for major, minor in SUPPORTED_LINES)
        super().__init__(f"{where} has Hive schema version '{raw}', which is not supported (supported: {lines}).")
        self.raw = raw
        self.metastore = metastore


@total_ordering
@dataclass(frozen=True)
class SchemaVersion:
    """A Hive schema version such as ``2.3.0``, ``4.0.0-beta-2`` or ``4.0.0``; pre-releases sort first."""

    major: int
    minor: int
    patch: int
    pre_tag: str = ""
    pre_number: int = 0

    @classmethod
    def parse(cls, raw: str) -> SchemaVersion:
        match = _VERSION_PATTERN.match(raw.strip())
        if not match:
            raise UnsupportedSchemaVersion(raw)
        major, minor, patch, tag, number = match.groups()
        return cls(int(major), int(minor), int(patch), (tag or "").lower(), int(number or 0))

    @property
    def line(self) -> tuple[int, int]:
        return (self.major, self.minor)

    @property
    def line_name(self) -> str:
        """``3.1`` for 3.1.0: how messages name the Hive release line."""
        return f"{self.major}.{self.minor}"

    @property
    def is_supported(self) -> bool:
        return self.line in SUPPORTED_LINES

    @property
    def capabilities(self) -> Capabilities:
        return _capabilities_of(self)

    def within(self, since: SchemaVersion | None, until: SchemaVersion | None) -> bool:
        """Whether this version is ``since`` or later (no bound: any) and before ``until`` (no bound: any)."""
        return (since is None or self >= since) and (until is None or self < until)

    def holds_rows_of(self, source: SchemaVersion) -> bool:
        """Whether a metastore of this schema can take rows read from one of ``source``'s: the same or a newer
        schema (a newer schema's columns have nowhere to go in an older one)."""
        return self >= source

    def _key(self) -> tuple:
        # A release sorts after its pre-releases: 4.0.0-alpha-1 < 4.0.0-beta-2 < 4.0.0.
        pre = (0, self.pre_tag, self.pre_number) if self.pre_tag else (1, "", 0)
        return (self.major, self.minor, self.patch, pre)

    def __lt__(self, other: SchemaVersion) -> bool:
        return self._key() < other._key()

    def __str__(self) -> str:
        pre = f"-{self.pre_tag}-{self.pre_number}" if self.pre_tag else ""
        return f"{self.major}.{self.minor}.{self.patch}{pre}"


@functools.cache
def _capabilities_of(version: SchemaVersion) -> Capabilities:
    return Capabilities.of(version)


HIVE_3 = SchemaVersion(3, 0, 0)
HIVE_4 = SchemaVersion(4, 0, 0, "alpha", 1)
HIVE_4_0_0 = SchemaVersion(4, 0, 0)


@dataclass(frozen=True)
class Capabilities:
    """What a Hive version's metastore schema holds and what its HiveAlterHandler does, one named flag per rule.

    Rule numbers refer to ``hive-alter-rules.md``.
    """

    # --- schema (the official scripts) ---
    #: CTLGS, DBS.CTLG_NAME (and NOTIFICATION_LOG.CAT_NAME, ``hive`` in every event row) and the default ``hive``
    #: catalog row; NOTIFICATION_SEQUENCE seeded (3.0.0).
    catalogs: bool
    #: TXN_TO_WRITE_ID, NEXT_WRITE_ID and the write-id columns of the ACID bookkeeping (3.0.0).
    write_ids: bool
    #: TAB_COL_STATS / PART_COL_STATS carry DB_NAME, TABLE_NAME (and PARTITION_NAME): a rename re-labels them
    #: (until HIVE-27725, 4.0.0).
    statistics_labelled_by_name: bool
    #: The schema script seeds TXNS with a committed transaction 0 (4.x, whose TXN_ID is an identity column).
    seeds_committed_transaction_zero: bool
    #: The transaction high-water mark is TXNS's highest TXN_ID (4.x, NEXT_TXN_ID dropped); before, NEXT_TXN_ID - 1.
    transaction_high_water_mark_from_txns: bool

    # --- what Hive writes when it creates a table ---
    #: New tables get ``bucketing_version=2`` (HIVE-18910, 3.0.0).
    writes_bucketing_version: bool

    # --- names and types (rules 2.3, 2.5, 5) ---
    #: ``validateName`` allows the long list of special characters, not only ``/`` (rule 2.3, 4.x).
    special_characters_in_table_names: bool
    #: A string-family column may change to ``double`` (rule 5.4, until 4.x).
    string_to_double_type_change: bool
    #: Serdes that allow incompatible column type changes (rule 5.5, 4.x).
    incompatible_type_exempt_serdes: bool
    #: Bucketing columns must be table columns after the change, a blocker (rule 2.5, 4.x).
    validates_bucket_columns: bool
    #: Renaming a column renames it in the bucketing columns too (4.x; before, the bucketing column dangles).
    renames_bucketing_columns: bool

    # --- ACID and replication (rules 4, acid) ---
    #: Converting to ACID requires a bucketed table (Hive 2.x).
    acid_requires_bucketing: bool
    #: Replication sources refuse type changes, ACID conversion and managed relocation (rules 4.1-4.3, 4.x).
    replication_source_guards: bool

    # --- table rename (rules 7-9) ---
    #: Translated external tables (EXTERNAL + TRANSLATED_TO_EXTERNAL) move on rename (rule 7.2, 4.x).
    moves_translated_external_on_rename: bool
    #: The renamed table's directory comes from the database's managed location or the warehouse (rules 8.3, 8.5,
    #: 4.x); before, from the database's plain location (rule 8.8).
    rename_destination_from_managed_location: bool
    #: A partitioned table's rename deletes every partition column statistic (Hive 2.3).
    rename_deletes_partition_statistics: bool
    #: A rename rewrites partitions in batches and statistics in bulk (4.x); before, one partition at a time.
    rename_batches_partitions: bool

    # --- partition rename (rule 17) ---
    #: Whether a partition's data moves is decided by the EXTERNAL parameter, not the table type (rule 17.3, 4.x).
    partition_move_decided_by_external_parameter: bool
    #: An existing destination refuses a partition rename even when the source directory is missing (2.3 checks it
    #: first).
    partition_rename_refuses_existing_destination_first: bool
    #: A partition rename deletes all the partition's column statistics (2.3); later only those whose column no longer
    #: matches by name and type (rule 17.5).
    partition_rename_deletes_statistics: bool

    # --- column changes (rules 10-12) ---
    #: Columns only appended (no CASCADE) or the same (CASCADE) leave the partitions alone (rule 10.2, 4.x); before,
    #: any difference rewrites every partition (rule 10.6).
    column_change_skips_unchanged_partitions: bool
    #: A partitioned table's column change deletes its table-level column statistics (4.x).
    column_change_prunes_partitioned_table_statistics: bool
    #: Without CASCADE a column change still loads and saves every partition to prune its statistics (rule 10.6, 3.1
    #: only: 2.3's HiveAlterHandler.alterTable touches partitions only when CASCADE is asked, 4.x follows rule 10.2).
    column_change_touches_partitions_without_cascade: bool
    #: REPLACE COLUMNS on a partitioned Parquet table may drop columns only with CASCADE (the client's DDLTask, 3.x+;
    #: not in 2.3.10's).
    parquet_replace_needs_cascade_to_drop: bool
    #: REPLACE COLUMNS accepts Iceberg's serde and no longer DynamicSerDe (AlterTableReplaceColumnsOperation, 4.x).
    replace_columns_serdes_of_4: bool

    # --- basic statistics (rule 13) ---
    #: Recomputed quick statistics include ``numFilesErasureCoded`` (``MetaStoreServerUtils.populateQuickStats``, 4.x).
    quick_stats_count_erasure_coded_files: bool

    # --- MSCK REPAIR TABLE (operations/planners/partitions/msck.py) ---
    #: ``MSCK REPAIR TABLE … DROP|SYNC PARTITIONS`` exists (HIVE-17824, 3.0's ``Msck``/``DDLTask.msck``); 2.3 only adds.
    msck_drops_partitions: bool
    #: ``Msck.createPartitionsInBatches`` adds 3,000 partitions per ``add_partitions`` call
    #: (``metastore.msck.repair.batch.size``, 3.x+); 2.3's ``hive.msck.repair.batch.size`` is 0: one call for all.
    msck_adds_in_batches: bool

    # --- ACID readers and the compaction queue (catalog_admin/hive/acid.py, operations/planners/compaction.py) ---
    #: A base or delta directory's ``_v<txn>`` visibility suffix hides it until that transaction commits
    #: (``AcidUtils.getAcidState``, 4.x).
    acid_directory_visibility: bool
    #: ``TxnHandler.compact`` also returns a request ready for cleaning at the same compactor high-water mark instead
    #: of queueing another (4.x); before, only initiated and working ones.
    compaction_reuses_ready_for_cleaning: bool
    #: A transactional table's ``TRUNCATE`` keeps the files and writes an empty ``base_<writeId>`` into each directory
    #: (``hive.acid.truncate.usebase``; ``HMSHandler.addTruncateBaseFile``, 4.x); before, the files are deleted.
    truncate_writes_acid_base: bool
    #: A transactional table's ``TRUNCATE`` runs in a Hive transaction that allocates the table a write id and sets
    #: the truncated table's or partitions' ``WRITE_ID`` to it (``TruncateTableDesc`` is a ``DDLDescWithWriteId``;
    #: ``HMSHandler.alterTableStatsForTruncate``, 4.x); 3.1's ``TruncateTableDesc`` is a plain ``DDLDesc``: none.
    truncate_allocates_write_id: bool

    # --- notification events (operations/events/) ---
    #: The default encoder is ``GzipJSONMessageEncoder``: ``MESSAGE_FORMAT`` ``gzip(json-2.0)``, each message gzipped
    #: and Base64-encoded (4.x); before, ``JSONMessageEncoder``'s plain ``json-0.2``.
    gzip_json_messages: bool
    #: Table messages carry ``tableType`` and ALTER messages ``isTruncateOp`` (3.0's ``JSONMessageFactory``).
    messages_carry_table_type: bool
    #: ALTER_TABLE and ADD_PARTITION messages carry ``locOwner`` and ALTER messages ``writeId`` (4.x).
    messages_carry_location_owner_and_write_id: bool
    #: Thrift ``Table`` and ``Partition`` objects carry ``catName`` (and a table its ``ownerType``), ``SerDeInfo`` its
    #: description, serializer and deserializer classes and serde type (3.0's ``hive_metastore.thrift``).
    thrift_objects_of_3: bool
    #: Thrift ``Table`` objects carry ``writeId`` and ``id``, ``Partition`` objects ``writeId`` (4.x).
    thrift_objects_of_4: bool
    #: ``ReplChangeManager.encodeFileUri`` writes ``uri#checksum#cmroot#subdir`` (``uri###`` without change
    #: management, 3.x+); before, ``uri`` and ``#checksum`` when the filesystem has one.
    file_uris_carry_change_management_fields: bool
    #: CREATE_TABLE and ADD_PARTITION list no files of an external table, and an empty list per partition of a
    #: transactional one (``DbNotificationListener``, 4.x); before, every table's and partition's files.
    events_skip_external_and_transactional_files: bool
    #: A rename into another database writes DROP_TABLE, CREATE_TABLE and ADD_PARTITION (3.x+); before, ALTER_TABLE.
    rename_across_databases_drops_and_creates: bool
    #: ``TxnHandler.abortTxns`` writes an ABORT_TXN per transaction (3.x+; 2.3's notifies no listener).
    abort_writes_events: bool
    #: ``abortTxns`` notifies only open transactions that are not read-only, its ABORT_TXN names the databases the
    #: transaction wrote (``dbsUpdated``), and its row's names are NULL (4.x; 3.1's direct SQL writes ``"null"`` and
    #: ``" "``).
    abort_events_of_4: bool
    #: CREATE_DATABASE and DROP_DATABASE messages carry ``dbJson`` (3.x) and ``cat`` (4.x); a database's event row
    #: names its table as one space on 3.x's direct SQL, NULL on 4.x (``operations/merge/events.py``).
    database_messages_carry_json: bool
    database_messages_carry_catalog: bool
    #: ``HMSHandler.alter_database`` notifies the listeners: an ALTER_DATABASE event with the database before and after
    #: (``JSONAlterDatabaseMessage``, 3.x+); 2.3's fires only the pre-event (``PreAlterDatabaseEvent``): no event.
    alter_database_writes_event: bool
    #: ``DROP DATABASE … CASCADE``'s events: 4.x's client leaves the tables to the server, whose ``drop_database_core``
    #: drops the functions first (DROP_FUNCTION …, DROP_TABLE …); 2.3's and 3.1's client drops the tables itself before
    #: asking the server (DROP_TABLE …, DROP_FUNCTION …). ``operations/events/functions.py``.
    drop_database_drops_functions_first: bool

    # --- databases (operations/planners/databases/) ---
    #: ``MANAGEDLOCATION`` (CREATE and ALTER DATABASE), DBS's DB_MANAGED_LOCATION_URI, CREATE_TIME and TYPE; a new
    #: database's location defaults to ``metastore.warehouse.external.dir``/d.db (else the warehouse) and its managed
    #: location to the warehouse's d.db when that differs (``CreateDatabaseOperation.makeLocationQualified``, 4.x);
    #: before, the location is ``hive.metastore.warehouse.dir``/d.db (``DDLTask.makeLocationQualified``).
    managed_locations: bool
    #: ``ALTER DATABASE … SET LOCATION`` (HIVE-8472, 3.0); Hive 2.3.10's parser refuses it ("cannot recognize input
    #: near 'd' 'SET' 'LOCATION' in alter database statement", checked with its Driver).
    database_set_location: bool

    # --- DROP TABLE ---
    #: An EXTERNAL table whose ``external.table.purge`` is true loses its data with the table
    #: (``HMSHandler.checkTableDataShouldBeDeleted``, 3.x and 4.x); 2.3 keeps every external table's data.
    drop_honours_external_table_purge: bool

    # --- SHOW CREATE TABLE (catalog_admin/hive/show_create.py) ---
    #: ``ShowCreateTableOperation`` (4.x): always ``ROW FORMAT SERDE``, statistics keys left out of TBLPROPERTIES;
    #: before, ``DDLTask.showCreateTable`` prints ``ROW FORMAT DELIMITED`` when the SerDe has delimiters.
    show_create_table_operation: bool

    # --- CREATE TABLE (operations/planners/create_table.py) ---
    #: A new table's ``COLUMN_STATS_ACCURATE`` also flags every column (``StatsSetupConst.setStatsStateForCreateTable``,
    #: 3.x+); before, ``{"BASIC_STATS":"true"}`` only (``setBasicStatsStateForCreateTable``).
    create_table_flags_column_statistics: bool
    #: A new ACID table's ``transactional_properties`` is lower-cased, checked and defaulted to ``default``, and a
    #: sorted full-ACID table refused (``TransactionalValidationListener``, 3.x+).
    create_table_normalizes_transactional_properties: bool

    @classmethod
    def of(cls, version: SchemaVersion) -> Capabilities:
        hive3, hive4 = version >= HIVE_3, version >= HIVE_4
        return cls(
            catalogs=hive3,
            write_ids=hive3,
            statistics_labelled_by_name=version < HIVE_4_0_0,
            seeds_committed_transaction_zero=hive4,
            transaction_high_water_mark_from_txns=hive4,
            writes_bucketing_version=hive3,
            special_characters_in_table_names=hive4,
            string_to_double_type_change=not hive4,
            incompatible_type_exempt_serdes=hive4,
            validates_bucket_columns=hive4,
            renames_bucketing_columns=hive4,
            acid_requires_bucketing=not hive3,
            replication_source_guards=hive4,
            moves_translated_external_on_rename=hive4,
            rename_destination_from_managed_location=hive4,
            rename_deletes_partition_statistics=not hive3,
            rename_batches_partitions=hive4,
            partition_move_decided_by_external_parameter=hive4,
            partition_rename_refuses_existing_destination_first=not hive3,
            partition_rename_deletes_statistics=not hive3,
            column_change_skips_unchanged_partitions=hive4,
            column_change_prunes_partitioned_table_statistics=hive4,
            column_change_touches_partitions_without_cascade=hive3 and not hive4,
            parquet_replace_needs_cascade_to_drop=hive3,
            replace_columns_serdes_of_4=hive4,
            quick_stats_count_erasure_coded_files=hive4,
            msck_drops_partitions=hive3,
            msck_adds_in_batches=hive3,
            acid_directory_visibility=hive4,
            truncate_writes_acid_base=hive4,
            truncate_allocates_write_id=hive4,
            compaction_reuses_ready_for_cleaning=hive4,
            gzip_json_messages=hive4,
            messages_carry_table_type=hive3,
            messages_carry_location_owner_and_write_id=hive4,
            thrift_objects_of_3=hive3,
            thrift_objects_of_4=hive4,
            file_uris_carry_change_management_fields=hive3,
            events_skip_external_and_transactional_files=hive4,
            rename_across_databases_drops_and_creates=hive3,
            abort_writes_events=hive3,
            abort_events_of_4=hive4,
            database_messages_carry_json=hive3,
            database_messages_carry_catalog=hive4,
            alter_database_writes_event=hive3,
            drop_database_drops_functions_first=hive4,
            managed_locations=hive4,
            database_set_location=hive3,
            drop_honours_external_table_purge=hive3,
            show_create_table_operation=hive4,
            create_table_flags_column_statistics=hive3,
            create_table_normalizes_transactional_properties=hive3,
        )

    def names(self) -> tuple[str, ...]:
        """The capabilities this version has, by name."""
        return tuple(f.name for f in fields(self) if getattr(self, f.name))
