"""
The unmanaged models match the real Hive schemas, version by version.

The six official databases are loaded from Hive's own scripts, so these tests check the models (and their
``versioned`` / ``hive_since`` declarations) against Hive itself: every table and column a version has is
modeled with a compatible type and nullability, and nothing a version lacks is declared available.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import pytest
from django.conf import settings
from django.db import connections, models

from catalog_admin.models import SchemaVersionRow, hive_models
from catalog_admin.models import transactions as acid_models
from catalog_admin.schema import SchemaVersion, field_available, model_available

pytestmark = [pytest.mark.django_db, pytest.mark.matrix]  # compares the models with every official schema

INTEGER_TYPES = {"bigint", "integer", "int", "mediumint", "smallint", "tinyint"}
STRING_TYPES = {"character varying", "character", "varchar", "char", "text", "tinytext", "mediumtext", "longtext"}
FLOAT_TYPES = {"double precision", "double", "real", "float"}
BINARY_TYPES = {"bytea", "blob", "tinyblob", "mediumblob", "longblob", "binary", "varbinary"}
BOOLEAN_TYPES = {"boolean", "bool", "bit(1)", "tinyint"}
TIMESTAMP_TYPES = {"timestamp without time zone", "timestamp", "datetime"}
POSTGRESQL_ALIASES = [c.alias for c in settings.METASTORE_CONFIGS if c.vendor == "postgresql"]
FIELD_FAMILIES = {
    "BigIntegerField": INTEGER_TYPES,
    "IntegerField": INTEGER_TYPES,
    "SmallIntegerField": INTEGER_TYPES,
    "CharField": STRING_TYPES,
    "TextField": STRING_TYPES,
    "FloatField": FLOAT_TYPES,
    "BinaryField": BINARY_TYPES,
    "BooleanField": BOOLEAN_TYPES,
    "DateTimeField": TIMESTAMP_TYPES,
}


@dataclass(frozen=True)
class ColumnInfo:
    """A real column: its base type (lower case, MySQL ``bit(1)`` kept whole), length if any, nullability."""

    type: str
    length: int | None
    nullable: bool


# Introspection -------------------------------------------------------------------------------------------------


@functools.cache
def real_columns(alias: str) -> dict[str, dict[str, ColumnInfo]]:
    """Table name -> column name -> ColumnInfo, as the database reports them (cached: the schemas never change)."""
    connection = connections[alias]
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            return {table: _sqlite_columns(cursor, table) for table in connection.introspection.table_names(cursor)}
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT table_name, column_name, data_type, character_maximum_length, is_nullable"
                " FROM information_schema.columns WHERE table_schema = current_schema()"
            )
        else:
            cursor.execute(
                "SELECT table_name, column_name,"
                " CASE WHEN column_type = 'bit(1)' THEN column_type ELSE data_type END,"
                " character_maximum_length, is_nullable"
                " FROM information_schema.columns WHERE table_schema = DATABASE()"
            )
        tables: dict[str, dict[str, ColumnInfo]] = {}
        for table, column, data_type, length, nullable in cursor.fetchall():
            tables.setdefault(table, {})[column] = ColumnInfo(data_type.lower(), length, nullable == "YES")
        return tables


def _sqlite_columns(cursor, table: str) -> dict[str, ColumnInfo]:
    cursor.execute(f'PRAGMA table_info("{table}")')
    columns = {}
    for _cid, name, declared, notnull, _default, _pk in cursor.fetchall():
        match = re.fullmatch(r"\s*([a-z ]+?)\s*(?:\((\d+)(?:,\s*\d+)?\))?\s*", declared.lower())
        assert match, f"{table}.{name}: unexpected SQLite type {declared!r}"
        columns[name] = ColumnInfo(_sqlite_family_type(match[1]), int(match[2]) if match[2] else None, not notnull)
    return columns


def _sqlite_family_type(declared: str) -> str:
    """SQLite's type affinity rules, mapped onto the type names used above."""
    if declared in {"bool", "boolean"}:
        return "boolean"
    if "int" in declared:
        return "integer"
    if any(word in declared for word in ("char", "clob", "text")):
        return "varchar" if "char" in declared else "text"
    if "blob" in declared:
        return "blob"
    if any(word in declared for word in ("real", "floa", "doub")):
        return "real"
    return declared


# Expectations --------------------------------------------------------------------------------------------------


def folds_acid_names(vendor: str, version: SchemaVersion) -> bool:
    """Hive's 2.3 and 3.1 PostgreSQL scripts create the ACID tables unquoted: lower-case names and columns."""
    return vendor == "postgresql" and version < SchemaVersion(4, 0, 0)


def is_acid_model(model: type[models.Model]) -> bool:
    return model.__name__ in acid_models.__all__


def real_name(name: str, model: type[models.Model], vendor: str, version: SchemaVersion) -> str:
    return name.lower() if folds_acid_names(vendor, version) and is_acid_model(model) else name


def official_nullability(model: type[models.Model], field: models.Field) -> set[bool]:
    """Whether ``field``'s column is nullable, in each official schema that has it (their vendors and versions)."""
    nullable = set()
    for alias, (version, script) in settings.HIVE_TEST_METASTORES.items():
        vendor = connections[alias].vendor
        parsed = SchemaVersion.parse(version)
        table = real_columns(alias).get(real_name(model._meta.db_table, model, vendor, parsed), {})
        column = table.get(real_name(field.column, model, vendor, parsed))
        if script and column is not None:
            nullable.add(column.nullable)
    return nullable


def column_problem(
    field: models.Field, column: ColumnInfo, vendor: str, official_nullable: set[bool] | None = None
) -> str | None:
    """
    Why ``column`` cannot hold ``field`` (None when compatible).

    Nullability must match, except where Hive's official scripts disagree among themselves about the column
    (``official_nullable`` holds both values: e.g. NOT NULL on MySQL but not on PostgreSQL, or only since 3.0):
    the model must then allow NULL, as some supported metastore does.
    """
    target = field.target_field if field.is_relation else field
    internal_type = target.get_internal_type()
    accepted = set(FIELD_FAMILIES[internal_type])
    if internal_type == "BooleanField" and vendor == "sqlite":
        accepted.add("integer")  # SQLite stores booleans as integers
    if column.type not in accepted:
        return f"{internal_type} on a {column.type} column"
    if internal_type == "CharField" and column.length is not None and field.max_length > column.length:
        return f"max_length {field.max_length} > column length {column.length}"
    if field.primary_key or field in field.model._meta.pk_fields:
        return None
    if official_nullable == {True, False}:
        return None if field.null else "null=False, but Hive's scripts disagree and some allow NULL"
    if field.null != column.nullable:
        return f"null={field.null} but the column is {'NULL' if column.nullable else 'NOT NULL'}"
    return None


def schema_problems(alias: str, vendor: str, version: SchemaVersion) -> list[str]:
    """Every mismatch between the models and the real schema of ``alias``."""
    tables = real_columns(alias)
    problems = []
    for model in hive_models():
        table_name = real_name(model._meta.db_table, model, vendor, version)
        if not model_available(model, version):
            if table_name in tables:
                problems.append(f"{table_name}: exists, but {model.__name__} is declared unavailable in {version}")
            continue
        if table_name not in tables:
            problems.append(f"{table_name}: missing ({model.__name__})")
            continue
        columns = tables[table_name]
        for field in model._meta.concrete_fields:
            column_name = real_name(field.column, model, vendor, version)
            where = f"{table_name}.{column_name} ({model.__name__}.{field.name})"
            if not field_available(field, version):
                if column_name in columns:
                    problems.append(f"{where}: exists, but the field is declared unavailable in {version}")
            elif column_name not in columns:
                problems.append(f"{where}: missing")
            elif problem := column_problem(field, columns[column_name], vendor, official_nullability(model, field)):
                problems.append(f"{where}: {problem}")
    return problems


# Tests ---------------------------------------------------------------------------------------------------------


def test_version_row_is_the_loaded_schema_version(metastore_alias, official_schemas):
    # given
    expected = official_schemas[metastore_alias].version

    # when
    versions = list(SchemaVersionRow.objects.using(metastore_alias).values_list("schema_version", flat=True))

    # then
    assert versions == [expected]


def test_models_match_the_real_schema(metastore_alias, official_schemas):
    """Tables and columns available in the version exist with compatible types; unavailable ones do not."""
    # given
    schema = official_schemas[metastore_alias]

    # when
    problems = schema_problems(metastore_alias, schema.vendor, schema.schema_version)

    # then
    assert not problems, "\n".join(problems)


def test_schema_check_detects_wrong_declarations(official_schemas):
    """The check above fails on a wrong type, length, nullability, version window or table name."""
    # given
    from catalog_admin.models import Database, Table, Transaction

    version_31 = official_schemas["hive31_pg"].schema_version
    columns = real_columns("hive31_pg")
    name, owner = Database._meta.get_field("name"), Table._meta.get_field("owner")
    location_uri, catalog_name = Database._meta.get_field("location_uri"), Database._meta.get_field("catalog_name")

    # then: types and lengths
    assert column_problem(name, columns["DBS"]["NAME"], "postgresql") is None
    assert column_problem(name, columns["TBLS"]["TBL_NAME"], "postgresql") is None
    assert "BigIntegerField on a character varying column" in column_problem(
        Database._meta.get_field("id"), columns["DBS"]["NAME"], "postgresql"
    )
    assert "max_length 767 > column length 128" in column_problem(owner, columns["DBS"]["NAME"], "postgresql")
    # nullability, exact where Hive's scripts agree, NULL allowed where they do not
    assert "null=False but the column is NULL" in column_problem(location_uri, columns["DBS"]["DESC"], "postgresql")
    assert official_nullability(Database, location_uri) == {False}
    assert official_nullability(Database, catalog_name) == {True, False}  # NOT NULL on MySQL, NULL on PG 3.1
    assert column_problem(catalog_name, columns["DBS"]["CTLG_NAME"], "postgresql", {True, False}) is None
    assert "some allow NULL" in column_problem(location_uri, columns["DBS"]["DESC"], "postgresql", {True, False})
    # table names and version windows
    assert "txns" in columns
    assert real_name("TXNS", Transaction, "postgresql", version_31) == "txns"
    assert real_name("TXNS", Transaction, "postgresql", SchemaVersion(4, 0, 0)) == "TXNS"
    assert real_name("TXNS", Transaction, "mysql", version_31) == "TXNS"
    as_if_23 = schema_problems("hive31_pg", "postgresql", SchemaVersion(2, 3, 0))
    assert "CTLGS: exists, but Catalog is declared unavailable in 2.3.0" in as_if_23
    assert any(p.startswith("TBLS.OWNER_TYPE") and "declared unavailable" in p for p in as_if_23)
    as_if_31 = schema_problems("hive23_pg", "postgresql", version_31)
    assert "TBLS.OWNER_TYPE (Table.owner_type): missing" in as_if_31
    assert "CTLGS: missing (Catalog)" in as_if_31


@pytest.mark.parametrize("metastore_alias", POSTGRESQL_ALIASES, indirect=True)
def test_postgresql_backend_maps_acid_names_like_the_script(metastore_alias, official_schemas):
    """On PostgreSQL the backend quotes TXNS & co. exactly as the loaded script named them."""
    # given
    schema = official_schemas[metastore_alias]
    connection = connections[metastore_alias]
    connection.ensure_connection()
    tables = real_columns(metastore_alias)

    # when
    quoted = {model: connection.ops.quote_name(model._meta.db_table).strip('"') for model in hive_models()}

    # then
    for model, name in quoted.items():
        if model_available(model, schema.schema_version):
            assert name in tables, f"{model.__name__} is quoted as {name!r}, which does not exist"
    assert connection.fold_acid_names is folds_acid_names("postgresql", schema.schema_version)


def test_sqlite_demo_schema_has_the_official_31_columns(official_schemas):
    """The project's own SQLite DDL creates each modeled table with the columns of Hive's 3.1.0 script."""
    # given
    assert official_schemas["hive_sqlite"].version == official_schemas["hive31_pg"].version == "3.1.0"
    version = SchemaVersion.parse("3.1.0")
    sqlite_tables = real_columns("hive_sqlite")
    official_tables = real_columns("hive31_pg")
    modeled = [model for model in hive_models() if model_available(model, version)]

    # when
    differences = {}
    for model in modeled:
        sqlite_columns = {c.upper() for c in sqlite_tables.get(model._meta.db_table, {})}
        official_columns = {
            c.upper() for c in official_tables.get(real_name(model._meta.db_table, model, "postgresql", version), {})
        }
        if sqlite_columns != official_columns:
            differences[model._meta.db_table] = {
                "only in sqlite": sorted(sqlite_columns - official_columns),
                "only in official": sorted(official_columns - sqlite_columns),
            }

    # then
    assert modeled
    assert differences == {}
