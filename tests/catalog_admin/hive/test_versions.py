"""Hive schema versions: parsing, ordering and the named capabilities every version-dependent rule asks."""

from __future__ import annotations

import pytest

from catalog_admin.hive.versions import (
    HIVE_3,
    HIVE_4,
    HIVE_4_0_0,
    Capabilities,
    SchemaVersion,
    UnsupportedSchemaVersion,
)


def test_pre_releases_sort_before_their_release() -> None:
    """4.0.0-alpha-1 < 4.0.0-beta-2 < 4.0.0, and the 3.x line starts at 3.0.0 (Hive has no 3.0.0 pre-release schema)."""
    # given
    raw = ["4.0.0", "2.3.0", "4.0.0-beta-2", "3.1.0", "4.0.0-alpha-1", "3.0.0"]

    # when
    ordered = [str(v) for v in sorted(SchemaVersion.parse(r) for r in raw)]

    # then
    assert ordered == ["2.3.0", "3.0.0", "3.1.0", "4.0.0-alpha-1", "4.0.0-beta-2", "4.0.0"]
    assert (str(HIVE_3), str(HIVE_4), str(HIVE_4_0_0)) == ("3.0.0", "4.0.0-alpha-1", "4.0.0")


def test_an_unparseable_version_is_refused() -> None:
    """A VERSION row that is no Hive version raises UnsupportedSchemaVersion naming it."""
    with pytest.raises(UnsupportedSchemaVersion, match="'three'"):
        SchemaVersion.parse("three")


EXPECTED = {
    "2.3.0": {"acid_requires_bucketing", "rename_deletes_partition_statistics", "string_to_double_type_change",
              "partition_rename_deletes_statistics",
              "partition_rename_refuses_existing_destination_first", "statistics_labelled_by_name"},
    "3.1.0": {"catalogs", "write_ids", "writes_bucketing_version", "string_to_double_type_change",
              "statistics_labelled_by_name", "column_change_touches_partitions_without_cascade",
              "parquet_replace_needs_cascade_to_drop", "messages_carry_table_type", "thrift_objects_of_3",
              "file_uris_carry_change_management_fields", "rename_across_databases_drops_and_creates",
              "abort_writes_events", "database_messages_carry_json", "create_table_flags_column_statistics",
              "create_table_normalizes_transactional_properties", "alter_database_writes_event",
              "database_set_location", "msck_drops_partitions", "msck_adds_in_batches",
              "drop_honours_external_table_purge"},
    "4.0.0-beta-2": {"catalogs", "write_ids", "writes_bucketing_version", "statistics_labelled_by_name",
                     "create_table_flags_column_statistics", "create_table_normalizes_transactional_properties",
                     "seeds_committed_transaction_zero", "special_characters_in_table_names",
                     "incompatible_type_exempt_serdes", "validates_bucket_columns", "renames_bucketing_columns",
                     "replication_source_guards", "moves_translated_external_on_rename",
                     "rename_destination_from_managed_location", "rename_batches_partitions",
                     "partition_move_decided_by_external_parameter", "column_change_skips_unchanged_partitions",
                     "column_change_prunes_partitioned_table_statistics", "parquet_replace_needs_cascade_to_drop",
                     "replace_columns_serdes_of_4", "quick_stats_count_erasure_coded_files",
                     "show_create_table_operation", "transaction_high_water_mark_from_txns",
                     "acid_directory_visibility", "truncate_writes_acid_base", "truncate_allocates_write_id",
                     "compaction_reuses_ready_for_cleaning",
                     "gzip_json_messages", "messages_carry_table_type", "messages_carry_location_owner_and_write_id",
                     "thrift_objects_of_3",
                     "thrift_objects_of_4", "file_uris_carry_change_management_fields",
                     "events_skip_external_and_transactional_files", "rename_across_databases_drops_and_creates",
                     "abort_writes_events", "abort_events_of_4", "database_messages_carry_json",
                     "database_messages_carry_catalog", "alter_database_writes_event", "managed_locations",
                     "database_set_location", "msck_drops_partitions", "msck_adds_in_batches",
                     "drop_honours_external_table_purge", "drop_database_drops_functions_first"},
}  # fmt: skip
EXPECTED["4.0.0"] = EXPECTED["4.0.0-beta-2"] - {"statistics_labelled_by_name"}


@pytest.mark.parametrize("raw", list(EXPECTED))
def test_each_version_has_its_named_capabilities(raw: str) -> None:
    """Each supported line, and 4.0.0-beta-2 (whose statistics still carry names), has exactly its capabilities."""
    # given
    version = SchemaVersion.parse(raw)

    # when
    names = set(version.capabilities.names())

    # then
    assert names == EXPECTED[raw]


def test_a_patch_release_keeps_its_lines_capabilities() -> None:
    """2.3.9 and 3.1.3 behave as 2.3.0 and 3.1.0: capabilities follow schema boundaries, not exact versions."""
    # given
    pairs = [("2.3.9", "2.3.0"), ("3.1.3", "3.1.0")]

    # when
    same = [Capabilities.of(SchemaVersion.parse(a)) == Capabilities.of(SchemaVersion.parse(b)) for a, b in pairs]

    # then
    assert same == [True, True]


def test_within_bounds_a_version_from_since_inclusive_to_until_exclusive() -> None:
    """A column ``since`` 3.0.0 ``until`` 4.0.0 exists in 3.0.0 and 4.0.0-beta-2, not in 2.3.0 or 4.0.0."""
    # given
    since, until = HIVE_3, HIVE_4_0_0

    # when
    present = {
        raw: SchemaVersion.parse(raw).within(since, until) for raw in ("2.3.0", "3.0.0", "4.0.0-beta-2", "4.0.0")
    }

    # then
    assert present == {"2.3.0": False, "3.0.0": True, "4.0.0-beta-2": True, "4.0.0": False}
    assert SchemaVersion.parse("2.3.0").within(None, None)


def test_a_schema_holds_rows_of_the_same_or_an_older_schema_only() -> None:
    """A merge may copy rows into the same or a newer schema, never into an older one."""
    # given
    v23, v31 = SchemaVersion.parse("2.3.0"), SchemaVersion.parse("3.1.0")

    # when / then
    assert (v31.holds_rows_of(v23), v31.holds_rows_of(v31), v23.holds_rows_of(v31)) == (True, True, False)
