"""The metastore registry (environment), the router, resolving metastores and reading their schema version."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
from django.conf import settings
from django.db import router
from django.test import Client
from django.urls import reverse

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode, NotFound
from catalog_admin.metastores import (
    DEMO_METASTORE_NAME,
    MetastoreConfig,
    MetastoreConfigError,
    database_settings,
    parse_metastores,
)
from catalog_admin.models import SchemaVersionRow, Table
from catalog_admin.schema import SchemaVersion, UnsupportedSchemaVersion
from catalog_admin.selectors.metastores import get_metastore, metastore_status
from catalog_admin.utils.text import RedactSecrets
from tests.fixtures.factories import make_user, token_client

BASE = Path("/srv/console")

# parse_metastores -----------------------------------------------------------------------------------------------


def test_metastores_variable_registers_each_name_in_order():
    # given
    env = {"METASTORES": " prod=postgresql://hive@db/hms ; legacy=mysql://hive@old/hms;"}

    # when
    configs, default = parse_metastores(env, BASE)

    # then
    assert [(c.name, c.url, c.alias) for c in configs] == [
        ("prod", "postgresql://hive@db/hms", "prod"),
        ("legacy", "mysql://hive@old/hms", "legacy"),
    ]
    assert default == "prod"
    assert [c.vendor for c in configs] == ["postgresql", "mysql"]


def test_metastores_takes_precedence_over_metastore_url():
    configs, _ = parse_metastores({"METASTORES": "a=sqlite:///a.db", "METASTORE_URL": "postgresql://x/y"}, BASE)

    assert [c.name for c in configs] == ["a"]


def test_metastore_url_registers_one_metastore_named_metastore():
    configs, default = parse_metastores({"METASTORE_URL": "postgres://hive@db/hms"}, BASE)

    assert [(c.name, c.vendor) for c in configs] == [("metastore", "postgresql")]
    assert default == "metastore"


def test_without_configuration_the_demo_metastore_is_used():
    # when
    configs, default = parse_metastores({}, BASE)

    # then
    assert default == DEMO_METASTORE_NAME == "demo"
    assert configs == [
        MetastoreConfig(
            name="demo",
            url=f"sqlite:///{BASE / 'var' / 'demo' / 'metastore.sqlite3'}",
            warehouse=str(BASE / "var" / "demo" / "warehouse"),
        )
    ]


def test_default_metastore_picks_the_default():
    env = {"METASTORES": "a=sqlite:///a.db;b=sqlite:///b.db", "DEFAULT_METASTORE": "b"}

    assert parse_metastores(env, BASE)[1] == "b"


def test_default_metastore_must_be_registered():
    env = {"METASTORES": "a=sqlite:///a.db", "DEFAULT_METASTORE": "nope"}

    with pytest.raises(MetastoreConfigError, match="DEFAULT_METASTORE names 'nope', which is not registered"):
        parse_metastores(env, BASE)


def test_warehouse_comes_from_the_per_metastore_variable():
    env = {"METASTORES": "prod_eu=sqlite:///a.db;other=sqlite:///b.db", "METASTORE_WAREHOUSE_PROD_EU": "s3a://wh"}

    configs, _ = parse_metastores(env, BASE)

    assert [c.warehouse for c in configs] == ["s3a://wh", ""]


def test_notification_events_are_on_unless_turned_off_for_one_metastore():
    """METASTORE_EVENTS_<NAME>=off turns Hive's notification events off for that metastore only."""
    env = {"METASTORES": "prod=sqlite:///a.db;quiet=sqlite:///b.db;odd=sqlite:///c.db", "METASTORE_EVENTS_QUIET": "off",
           "METASTORE_EVENTS_ODD": "yes"}  # fmt: skip

    configs, _ = parse_metastores(env, BASE)

    assert [(c.name, c.events) for c in configs] == [("prod", True), ("quiet", False), ("odd", True)]


def test_a_metastore_may_say_ranger_decides_its_access_and_a_typo_stops_the_start():
    """METASTORE_AUTHORIZATION_<NAME>: ``sql`` by default, ``ranger`` for one metastore; anything else is refused."""
    env = {"METASTORES": "prod=sqlite:///a.db;lake=sqlite:///b.db", "METASTORE_AUTHORIZATION_LAKE": "Ranger"}
    configs, _ = parse_metastores(env, BASE)
    assert [(c.name, c.authorization) for c in configs] == [("prod", "sql"), ("lake", "ranger")]
    with pytest.raises(MetastoreConfigError, match="METASTORE_AUTHORIZATION_LAKE is 'sentry'"):
        parse_metastores({**env, "METASTORE_AUTHORIZATION_LAKE": "sentry"}, BASE)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("Prod=sqlite:///a.db", "Metastore name 'Prod' is invalid"),
        ("1prod=sqlite:///a.db", "Metastore name '1prod' is invalid"),
        ("pro-d=sqlite:///a.db", "Metastore name 'pro-d' is invalid"),
        ("default=sqlite:///a.db", "Metastore name 'default' is invalid"),
        ("=sqlite:///a.db", "Metastore name '' is invalid"),
        ("prod", "METASTORES entry 'prod' is not of the form name=url"),
        ("prod=", "METASTORES entry 'prod=' is not of the form name=url"),
        ("a=sqlite:///a.db;a=sqlite:///b.db", "Metastore 'a' is registered twice in METASTORES"),
        (" ; ;", "METASTORES is set but registers no metastore"),
    ],
)
def test_invalid_metastores_values_are_rejected_clearly(value, message):
    with pytest.raises(MetastoreConfigError, match=message):
        parse_metastores({"METASTORES": value}, BASE)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://db/hms", "Metastore 'bad' has an unusable URL: Scheme 'http://' is unknown"),
        ("postgresql://hive@db:port/hms", "Metastore 'bad' has an unusable URL"),
        ("oracle://hive@db/hms", "Metastore 'bad' uses 'oracle'; supported are postgresql, mysql and sqlite"),
        ("mssql://hive@db/hms", "Metastore 'bad' uses 'mssql'; supported are postgresql, mysql and sqlite"),
        ("cockroach://hive@db/hms", "Metastore 'bad' uses 'cockroach'; supported are postgresql, mysql and sqlite"),
    ],
)
def test_unsupported_url_schemes_are_rejected_clearly(url, message):
    # given
    (config,), _ = parse_metastores({"METASTORES": f"bad={url}"}, BASE)

    # when / then
    with pytest.raises(MetastoreConfigError, match=message):
        database_settings(config, BASE)


def test_database_settings_use_the_project_backends():
    # given
    pg = MetastoreConfig("pg", "postgresql://hive:pw@db:5433/hms?sslmode=require")
    my = MetastoreConfig("my", "mysql://hive@db/hms")
    lite = MetastoreConfig("lite", "sqlite:///var/m.sqlite3")

    # when
    pg_db, my_db, lite_db = (database_settings(c, BASE) for c in (pg, my, lite))

    # then
    assert (pg_db["ENGINE"], pg_db["NAME"], pg_db["PORT"], pg_db["OPTIONS"]) == (
        "catalog_admin.backends.postgresql",
        "hms",
        5433,
        {"sslmode": "require"},
    )
    assert (my_db["ENGINE"], my_db["OPTIONS"]) == ("django.db.backends.mysql", {"charset": "utf8mb4"})
    assert (lite_db["ENGINE"], lite_db["NAME"]) == ("django.db.backends.sqlite3", str(BASE / "var" / "m.sqlite3"))
    assert all(db["TEST"] == {"MIGRATE": False} for db in (pg_db, my_db, lite_db))


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://hive:s3cret@db:5432/hms", "postgresql://hive:***@db:5432/hms"),
        ("mysql://root:p%40ss@db/hms?ssl=1", "mysql://root:***@db/hms?ssl=1"),
        ("postgresql://hive@db/hms", "postgresql://hive@db/hms"),
        ("sqlite:////var/m.sqlite3", "sqlite:////var/m.sqlite3"),
        (
            "postgresql://hive@db/hms?password=s3cret&sslmode=require",
            "postgresql://hive@db/hms?password=***&sslmode=require",
        ),
        ("mysql://root@db/hms?charset=utf8&passwd=s3cret", "mysql://root@db/hms?charset=utf8&passwd=***"),
        ("postgresql://hive:s3cret@db/hms?sslpassword=s3cret", "postgresql://hive:***@db/hms?sslpassword=***"),
        ("postgresql://:s3cret@db/hms", "postgresql://:***@db/hms"),
    ],
)
def test_display_url_hides_the_password(url, shown):
    # when
    displayed = MetastoreConfig("m", url).display_url

    # then
    assert displayed == shown
    assert "s3cret" not in displayed
    assert "p%40ss" not in displayed


def test_a_configuration_error_and_a_configs_repr_never_show_the_password():
    """The errors raised while reading METASTORES (logged at start-up) and a config's repr (in tracebacks and logs)
    show the URL redacted."""
    # when
    with pytest.raises(MetastoreConfigError) as raised:
        parse_metastores({"METASTORES": "prod postgresql://hive:s3cret@db/hms"}, BASE)
    shown = repr(MetastoreConfig("prod", "postgresql://hive@db/hms?password=s3cret"))

    # then
    assert str(raised.value) == "METASTORES entry 'prod postgresql://hive:***@db/hms' is not of the form name=url."
    assert "s3cret" not in shown and "prod" in shown


def test_an_error_logged_with_a_connection_string_is_redacted_by_the_console_handler() -> None:
    """The console's log handler (settings.LOGGING) redacts the message and the traceback of every record."""
    # given
    handler = next(h for h in logging.getLogger().handlers if any(isinstance(f, RedactSecrets) for f in h.filters))
    written = io.StringIO()
    previous = handler.setStream(written)

    # when
    try:
        try:
            raise ValueError("cannot connect to postgresql://hive:s3cret@db/hms?password=s3cret")
        except ValueError:
            logging.getLogger("catalog_admin.test").error(
                "connection %s failed", "host=db password=s3cret", exc_info=True
            )
    finally:
        handler.setStream(previous)

    # then
    text = written.getvalue()
    assert "connection host=db password=*** failed" in text
    assert "postgresql://hive:***@db/hms?password=***" in text and "s3cret" not in text


# Settings and router --------------------------------------------------------------------------------------------


@pytest.mark.matrix
def test_test_settings_register_the_seven_metastores():
    # then
    assert [c.alias for c in settings.METASTORE_CONFIGS] == [
        "hive23_pg",
        "hive31_pg",
        "hive40_pg",
        "hive23_my",
        "hive31_my",
        "hive40_my",
        "hive_sqlite",
    ]
    assert settings.DEFAULT_METASTORE == "hive31_pg"
    assert {c.alias for c in settings.METASTORE_CONFIGS} < set(settings.DATABASES)


def test_router_never_migrates_metastores(metastore_alias):
    # then
    assert router.allow_migrate(metastore_alias, "catalog_admin", model_name="table") is False
    assert router.allow_migrate(metastore_alias, "auth", model_name="user") is False
    assert router.allow_migrate("default", "auth", model_name="user") is True


def test_router_sends_hive_models_to_the_default_metastore_and_the_rest_to_default():
    # given
    from django.contrib.auth import get_user_model

    # then
    assert router.db_for_read(Table) == router.db_for_write(Table) == "hive31_pg"
    assert router.db_for_read(get_user_model()) == "default"


@pytest.mark.matrix
@pytest.mark.django_db
def test_router_keeps_an_instance_on_its_own_metastore():
    # given
    version = SchemaVersionRow.objects.using("hive23_my").get()

    # then
    assert router.db_for_read(SchemaVersionRow, instance=version) == "hive23_my"
    assert router.allow_relation(version, SchemaVersionRow.objects.using("hive23_my").get()) is True
    assert router.allow_relation(version, SchemaVersionRow.objects.using("hive40_pg").get()) is False


@pytest.mark.django_db
def test_unqualified_hive_queries_read_the_default_metastore():
    assert SchemaVersionRow.objects.get().schema_version == "3.1.0"


# get_metastore ---------------------------------------------------------------------------------------------------


def test_get_metastore_reads_each_schema_version(metastore, official_schemas):
    # then
    expected = official_schemas[metastore.alias]
    assert metastore.schema.raw_version == expected.version
    assert metastore.schema.version == SchemaVersion.parse(expected.version)
    assert metastore.vendor == expected.vendor
    assert metastore.is_default is (metastore.alias == "hive31_pg")


@pytest.mark.django_db
def test_get_metastore_without_a_name_is_the_default():
    assert get_metastore().name == "hive31_pg"


def test_get_metastore_of_an_unknown_name_is_not_found():
    # when
    with pytest.raises(NotFound) as raised:
        get_metastore("nope")

    # then
    assert raised.value.code is ErrorCode.NOT_FOUND
    assert raised.value.message == "Metastore 'nope' was not found."
    assert raised.value.details == {"kind": "metastore", "name": "nope"}


@pytest.mark.django_db(databases="__all__")
def test_a_metastore_password_in_its_url_is_shown_to_nobody(register_metastore):
    """A metastore registered with ``?password=`` (and ``user:password@``): the overview page shows its URL to an
    operator only, redacted; the API's metastore list, the unavailable error and /health/ (signed in) show it redacted
    to a viewer."""
    # given
    register_metastore("leaky", "postgresql://postgres:s3cret-a@127.0.0.1:1/x?password=s3cret-b&connect_timeout=2")
    viewer, operator = make_user("viewer", "viewer"), make_user("operator", "admin")
    browser, operator_browser = Client(), Client()
    browser.force_login(viewer)
    operator_browser.force_login(operator)

    # when
    answers = [
        browser.get("/"),
        token_client(viewer).get(reverse("api:metastore-list")),
        browser.get(reverse("health")),
        operator_browser.get("/"),
    ]
    with pytest.raises(ApplicationError) as unavailable:
        get_metastore("leaky")

    # then
    texts = [answer.content.decode() for answer in answers] + [unavailable.value.message]
    assert "127.0.0.1:1/x" not in texts[0]  # a viewer is not shown the console's wiring
    assert "postgresql://postgres:***@127.0.0.1:1/x?password=***&amp;connect_timeout=2" in texts[3]
    assert "postgresql://postgres:***@127.0.0.1:1/x?password=***&connect_timeout=2" in texts[1]
    assert not [text for text in texts if "s3cret" in text]


@pytest.mark.parametrize(
    "url", ["postgresql://postgres@127.0.0.1:1/x", "mysql://root@127.0.0.1:1/x"], ids=["postgresql", "mysql"]
)
def test_an_unreachable_metastore_is_unavailable(register_metastore, url):
    # given
    register_metastore("offline", url)

    # when
    with pytest.raises(ApplicationError) as raised:
        get_metastore("offline")
    status = metastore_status(next(c for c in settings.METASTORE_CONFIGS if c.name == "offline"))

    # then
    assert raised.value.code is ErrorCode.METASTORE_UNAVAILABLE
    assert raised.value.message.startswith("Metastore 'offline' is unavailable: ")
    assert raised.value.details == {"metastore": "offline"}
    assert status.metastore is None
    assert status.error == raised.value.message


def test_a_database_without_hive_tables_is_unavailable(register_metastore, tmp_path):
    # given
    register_metastore("empty", f"sqlite:///{tmp_path / 'empty.sqlite3'}")

    # when
    with pytest.raises(ApplicationError) as raised:
        get_metastore("empty")

    # then
    assert raised.value.code is ErrorCode.METASTORE_UNAVAILABLE
    assert "'empty'" in raised.value.message


def test_an_unsupported_schema_version_is_refused(metastore_alias, db):
    # given
    with allow_metastore_writes():
        SchemaVersionRow.objects.using(metastore_alias).update(schema_version="1.2.0")

    # when
    with pytest.raises(ApplicationError) as raised:
        get_metastore(metastore_alias)

    # then
    assert raised.value.code is ErrorCode.UNSUPPORTED_SCHEMA_VERSION
    assert f"Metastore '{metastore_alias}' has Hive schema version '1.2.0'" in raised.value.message
    assert raised.value.details == {"metastore": metastore_alias, "version": "1.2.0"}


@pytest.mark.matrix
@pytest.mark.django_db
@pytest.mark.parametrize("raw", ["garbage", "3.1", ""])
def test_an_unparsable_schema_version_is_refused(raw):
    # given
    with allow_metastore_writes():
        SchemaVersionRow.objects.using("hive40_my").update(schema_version=raw)

    # when
    with pytest.raises(ApplicationError) as raised:
        get_metastore("hive40_my")

    # then
    assert raised.value.code is ErrorCode.UNSUPPORTED_SCHEMA_VERSION
    assert raised.value.details["version"] == raw


@pytest.mark.matrix
@pytest.mark.django_db
def test_a_metastore_without_a_version_row_is_refused():
    # given
    with allow_metastore_writes():
        SchemaVersionRow.objects.using("hive_sqlite").all().delete()

    # when
    with pytest.raises(ApplicationError, match="has no row in its VERSION table") as raised:
        get_metastore("hive_sqlite")

    # then
    assert raised.value.code is ErrorCode.UNSUPPORTED_SCHEMA_VERSION


@pytest.mark.matrix
@pytest.mark.django_db
def test_the_schema_version_is_cached_until_cleared():
    # given
    from catalog_admin.selectors.metastores import clear_schema_cache

    get_metastore("hive23_pg")
    with allow_metastore_writes():
        SchemaVersionRow.objects.using("hive23_pg").update(schema_version="3.1.0")

    # when
    cached = get_metastore("hive23_pg").schema.raw_version
    clear_schema_cache()
    fresh = get_metastore("hive23_pg").schema.raw_version

    # then
    assert (cached, fresh) == ("2.3.0", "3.1.0")


# SchemaVersion --------------------------------------------------------------------------------------------------


def test_schema_versions_order_pre_releases_first():
    # given
    ordered = ["2.3.0", "3.0.0", "3.1.0", "3.1.3", "4.0.0-alpha-1", "4.0.0-alpha-2", "4.0.0-beta-1", "4.0.0-beta-2"]
    ordered.append("4.0.0")

    # when
    parsed = [SchemaVersion.parse(raw) for raw in ordered]

    # then
    assert sorted(reversed(parsed)) == parsed
    assert SchemaVersion.parse("4.0.0-beta-2") < SchemaVersion.parse("4.0.0")
    assert SchemaVersion.parse("4.0.0") > SchemaVersion.parse("4.0.0-beta-2")
    assert SchemaVersion.parse("4.0.0-beta-2") > SchemaVersion.parse("3.1.0")
    assert [str(v) for v in parsed] == ordered


@pytest.mark.parametrize(
    ("raw", "supported"),
    [("2.3.0", True), ("3.1.0", True), ("4.0.0", True), ("4.0.0-beta-2", True), ("1.2.0", False), ("3.0.0", False)],
)
def test_supported_release_lines(raw, supported):
    assert SchemaVersion.parse(raw).is_supported is supported


@pytest.mark.parametrize("raw", ["", "3.1", "4.0.0.1", "v3.1.0", "4.0.0-"])
def test_unparsable_versions_raise(raw):
    with pytest.raises(UnsupportedSchemaVersion, match=f"'{raw}'"):
        SchemaVersion.parse(raw)


# The test metastores themselves ---------------------------------------------------------------------------------


def test_each_test_metastore_is_seeded_with_the_demo_content(metastore, official_schemas):
    # given
    from catalog_admin.models import Database

    warehouse = official_schemas[metastore.alias].warehouse

    # when
    names = set(Database.objects.on(metastore).values_list("name", flat=True))
    data_files = [path for path in warehouse.rglob("*") if path.is_file()]

    # then
    assert {"sales", "marketing", "ops"} <= names
    assert Table.objects.on(metastore).filter(database__name="sales").exists()
    assert data_files


@pytest.mark.matrix
def test_official_schemas_name_the_scripts_loaded(official_schemas):
    # then
    assert {alias: (s.vendor, s.version) for alias, s in official_schemas.items()} == {
        "hive23_pg": ("postgresql", "2.3.0"),
        "hive31_pg": ("postgresql", "3.1.0"),
        "hive40_pg": ("postgresql", "4.0.0"),
        "hive23_my": ("mysql", "2.3.0"),
        "hive31_my": ("mysql", "3.1.0"),
        "hive40_my": ("mysql", "4.0.0"),
        "hive_sqlite": ("sqlite", "3.1.0"),
    }
    assert official_schemas["hive_sqlite"].script is None
    assert all(s.script.is_file() for s in official_schemas.values() if s.is_official)


@pytest.mark.matrix
def test_mariadb_loads_the_40_scripts_without_the_mysql8_statement(official_schemas):
    # given
    from tests.fixtures.metastores import MARIADB_INCOMPATIBLE_STATEMENT, _mariadb_script

    script_40, script_31 = official_schemas["hive40_my"].script, official_schemas["hive31_my"].script

    # when
    loaded_40, loaded_31 = _mariadb_script(script_40), _mariadb_script(script_31)

    # then
    assert script_40.read_text().count(MARIADB_INCOMPATIBLE_STATEMENT) == 1
    assert MARIADB_INCOMPATIBLE_STATEMENT not in loaded_40
    assert len(script_40.read_text().splitlines()) == len(loaded_40.splitlines())
    assert loaded_31 == script_31.read_text()


def test_a_metastore_may_name_its_partition_name_whitelist() -> None:
    """METASTORE_PARTITION_NAME_WHITELIST_<NAME> is that metastore's whitelist pattern; none by default; a pattern
    that is no regular expression is refused, naming the variable."""
    # given
    env = {"METASTORES": "a=sqlite:///a.db;b=sqlite:///b.db", "METASTORE_PARTITION_NAME_WHITELIST_A": "[\\w-]*"}

    # when
    configs, _ = parse_metastores(env, BASE)
    with pytest.raises(MetastoreConfigError, match="METASTORE_PARTITION_NAME_WHITELIST_B"):
        parse_metastores({**env, "METASTORE_PARTITION_NAME_WHITELIST_B": "[unclosed"}, BASE)

    # then
    assert [c.partition_name_whitelist for c in configs] == ["[\\w-]*", ""]


def test_a_metastore_may_name_its_trash_retention() -> None:
    """METASTORE_TRASH_RETENTION_DAYS_<NAME> is that metastore's trash retention in days; none by default; anything
    but a whole number of days is refused, naming the variable."""
    # given
    env = {"METASTORES": "a=sqlite:///a.db;b=sqlite:///b.db", "METASTORE_TRASH_RETENTION_DAYS_A": "30"}

    # when
    configs, _ = parse_metastores(env, BASE)
    with pytest.raises(MetastoreConfigError, match="METASTORE_TRASH_RETENTION_DAYS_B"):
        parse_metastores({**env, "METASTORE_TRASH_RETENTION_DAYS_B": "-1"}, BASE)

    # then
    assert [c.trash_retention_days for c in configs] == [30, None]
