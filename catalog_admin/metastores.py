"""
The registry of governed metastores, read from the environment (12-factor).

``METASTORES="prod=postgresql://…;legacy=mysql://…"`` registers several metastores; each
becomes a Django database alias of the same name. ``METASTORE_URL`` registers a single one
named ``metastore``. With neither, the embedded demo metastore (SQLite) is used.
``DEFAULT_METASTORE`` picks the default; otherwise it is the first registered.

Each metastore may also name a warehouse root for relative paths and local checks:
``METASTORE_WAREHOUSE_<NAME>`` (upper-cased name), a path or a URI (``file:/…``, ``file:///…``, ``hdfs://nn/…``,
``s3a://…``) as Hive's ``metastore.warehouse.dir`` is usually written. The console moves directories only inside a
metastore's governed roots: its warehouse roots and ``METASTORE_EXTRA_ROOTS_<NAME>`` (comma-separated), and the
databases' locations inside those; ``METASTORE_ALLOW_OUTSIDE_ROOTS_<NAME>`` (``true``) lets ``SET LOCATION`` point
outside them.
Every change the console executes writes Hive's notification events (NOTIFICATION_LOG) unless
``METASTORE_EVENTS_<NAME>=off`` (for a metastore that runs no notification listener, whose cleaner would never remove
them). ``METASTORE_PARTITION_NAME_WHITELIST_<NAME>`` is that metastore's ``metastore.partition.name.whitelist.pattern``
(a Java regular expression every partition value must match in full; unset by default, as in Hive).
``METASTORE_TRASH_RETENTION_DAYS_<NAME>`` is how many days the console's trash keeps dropped or truncated data before
a governed purge may delete it (unset: no retention, any entry may be purged).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import dj_database_url

from catalog_admin.locations import normalize_location
from catalog_admin.utils.text import redact

__all__ = (
    "DEMO_METASTORE_NAME",
    "MetastoreConfig",
    "MetastoreConfigError",
    "as_location",
    "database_settings",
    "local_path",
    "parse_metastores",
)

DEMO_METASTORE_NAME = "demo"
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
RESERVED_NAMES = frozenset({"default"})
URI_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # file:/…, hdfs://…, s3a://… (not a path)
TRUE_VALUES = frozenset({"1", "true", "yes", "on"})
OFF_VALUES = frozenset({"0", "false", "no", "off"})
ENGINES = {
    "postgresql": "catalog_admin.backends.postgresql",
    "mysql": "django.db.backends.mysql",
    "sqlite3": "django.db.backends.sqlite3",
}


class MetastoreConfigError(ValueError):
    """The metastore configuration in the environment is invalid."""


@dataclass(frozen=True)
class MetastoreConfig:
    """One registered metastore: its name (also its database alias) and connection URL."""

    name: str
    url: str = field(repr=False)  # may hold a password: shown only as display_url (redact)
    warehouse: str = ""
    external_warehouse: str = ""  # Hive 4's metastore.warehouse.external.dir
    extra_roots: tuple[str, ...] = ()
    allow_outside_roots: bool = False
    # External tables' files belong to whoever wrote them: the console rewrites or relocates them only when this says
    # the metastore's external data is governed too (METASTORE_GOVERNS_EXTERNAL_DATA_<NAME>=true).
    governs_external_data: bool = False
    events: bool = True  # write Hive's notification events (METASTORE_EVENTS_<NAME>=off turns them off)
    partition_name_whitelist: str = ""  # metastore.partition.name.whitelist.pattern ("" = none)
    msck_path_validation: str = "throw"  # hive.msck.path.validation: throw | skip | ignore (Hive's default: throw)
    # How many days the console's trash keeps dropped or truncated data before a purge may delete it
    # (METASTORE_TRASH_RETENTION_DAYS_<NAME>; None: no retention set, a purge may take any entry).
    trash_retention_days: int | None = None
    # Who enforces access (METASTORE_AUTHORIZATION_<NAME>): "sql" (Hive's SQL-standard authorization reads the HMS
    # grants, the default) or "ranger" (Apache Ranger: HMS grants are not enforced, the console writes none).
    authorization: str = "sql"

    @property
    def alias(self) -> str:
        return self.name

    @property
    def vendor(self) -> str:
        scheme = urlsplit(self.url).scheme.split("+")[0]
        return {
            "postgres": "postgresql",
            "pgsql": "postgresql",
            "mariadb": "mysql",
        }.get(scheme, scheme)

    @property
    def warehouse_location(self) -> str:
        """The warehouse root as Hive writes locations (``file:/abs/path`` for a local path; "" when not set)."""
        return as_location(self.warehouse)

    @property
    def warehouse_path(self) -> Path | None:
        """The warehouse root on this machine's disk (None when not set or not a ``file:`` location)."""
        return local_path(self.warehouse)

    @property
    def root_locations(self) -> tuple[str, ...]:
        """The configured governed roots, as locations: warehouse, external warehouse and the extra roots."""
        values = (self.warehouse, self.external_warehouse, *self.extra_roots)
        return tuple(dict.fromkeys(as_location(v) for v in values if v.strip()))

    @property
    def display_url(self) -> str:
        """The URL without its password or credential parameters, safe to show."""
        return redact(self.url)


def parse_metastores(env: dict[str, str], base_dir: Path) -> tuple[list[MetastoreConfig], str]:
    """Read the registered metastores and the default's name from an environment mapping."""
    if env.get("METASTORES"):
        pairs = _split_pairs(env["METASTORES"])
    elif env.get("METASTORE_URL"):
        pairs = [("metastore", env["METASTORE_URL"])]
    else:
        demo = base_dir / "var" / "demo" / "metastore.sqlite3"
        pairs = [(DEMO_METASTORE_NAME, f"sqlite:///{demo}")]
    configs = [_config(env, name, url, base_dir) for name, url in pairs]
    default = env.get("DEFAULT_METASTORE") or configs[0].name
    if default not in {c.name for c in configs}:
        raise MetastoreConfigError(f"DEFAULT_METASTORE names '{default}', which is not registered in METASTORES.")
    return configs, default


def database_settings(config: MetastoreConfig, base_dir: Path) -> dict:
    """The Django ``DATABASES`` entry for one metastore."""
    url = config.url
    if url.startswith("sqlite:///") and not url.startswith("sqlite:////"):
        url = f"sqlite:///{base_dir / url.removeprefix('sqlite:///')}"
    try:
        settings = dj_database_url.parse(url.split("?")[0], conn_max_age=60, conn_health_checks=True)
    except Exception as exc:  # dj_database_url raises bare exceptions for unknown schemes
        raise MetastoreConfigError(f"Metastore '{config.name}' has an unusable URL: {redact(str(exc))}") from exc
    backend = settings["ENGINE"].rsplit(".", 1)[-1]
    if backend not in ENGINES:
        raise MetastoreConfigError(
            f"Metastore '{config.name}' uses '{urlsplit(config.url).scheme}';"
            " supported are postgresql, mysql and sqlite."
        )
    settings["ENGINE"] = ENGINES[backend]
    settings["OPTIONS"] = dict(parse_qsl(urlsplit(config.url).query))
    if backend == "mysql":
        settings["OPTIONS"].setdefault("charset", "utf8mb4")
    if backend == "sqlite3":
        settings["CONN_MAX_AGE"] = 0
    settings["TEST"] = {"MIGRATE": False}
    return settings


def _split_pairs(value: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for item in filter(None, (part.strip() for part in value.split(";"))):
        name, sep, url = item.partition("=")
        name = name.strip()
        if not sep or not url.strip():
            raise MetastoreConfigError(f"METASTORES entry '{redact(item)}' is not of the form name=url.")
        if not NAME_PATTERN.match(name) or name in RESERVED_NAMES:
            raise MetastoreConfigError(
                f"Metastore name '{name}' is invalid: use lower-case letters, digits and '_', not 'default'."
            )
        if name in {n for n, _ in pairs}:
            raise MetastoreConfigError(f"Metastore '{name}' is registered twice in METASTORES.")
        pairs.append((name, url.strip()))
    if not pairs:
        raise MetastoreConfigError("METASTORES is set but registers no metastore.")
    return pairs


def as_location(value: str) -> str:
    """A configured directory as Hive writes locations: URIs as given (``file:///x`` as ``file:/x``), absolute paths
    as ``file:/abs/path``; "" stays ""."""
    value = value.strip()
    if not value:
        return ""
    if URI_PATTERN.match(value):
        return normalize_location(value)
    return normalize_location(str(Path(value).absolute()))


def local_path(value: str) -> Path | None:
    """The local directory of a configured path or ``file:`` URI (None for other schemes or "")."""
    location = as_location(value)
    if not location.startswith("file:"):
        return None
    return Path(location.removeprefix("file:"))


def _config(env: dict[str, str], name: str, url: str, base_dir: Path) -> MetastoreConfig:
    suffix = name.upper()
    extra = tuple(root.strip() for root in env.get(f"METASTORE_EXTRA_ROOTS_{suffix}", "").split(",") if root.strip())
    return MetastoreConfig(
        name=name,
        url=url,
        warehouse=_warehouse(env, name, base_dir),
        external_warehouse=env.get(f"METASTORE_EXTERNAL_WAREHOUSE_{suffix}", "").strip(),
        extra_roots=extra,
        allow_outside_roots=env.get(f"METASTORE_ALLOW_OUTSIDE_ROOTS_{suffix}", "").strip().lower() in TRUE_VALUES,
        governs_external_data=env.get(f"METASTORE_GOVERNS_EXTERNAL_DATA_{suffix}", "").strip().lower() in TRUE_VALUES,
        events=env.get(f"METASTORE_EVENTS_{suffix}", "").strip().lower() not in OFF_VALUES,
        partition_name_whitelist=_whitelist(env, suffix),
        msck_path_validation=_msck_path_validation(env, suffix),
        trash_retention_days=_retention_days(env, suffix),
        authorization=_authorization(env, suffix),
    )


def _msck_path_validation(env: dict[str, str], suffix: str) -> str:
    """``METASTORE_MSCK_PATH_VALIDATION_<NAME>``: Hive's ``hive.msck.path.validation`` for that metastore."""
    value = env.get(f"METASTORE_MSCK_PATH_VALIDATION_{suffix}", "").strip().lower() or "throw"
    if value not in ("throw", "skip", "ignore"):
        raise MetastoreConfigError(
            f"METASTORE_MSCK_PATH_VALIDATION_{suffix} is '{value}'; use throw, skip or ignore "
            "(hive.msck.path.validation)."
        )
    return value


def _retention_days(env: dict[str, str], suffix: str) -> int | None:
    """The metastore's trash retention in days (a whole number, 0 or more), or None when unset."""
    name = f"METASTORE_TRASH_RETENTION_DAYS_{suffix}"
    raw = env.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise MetastoreConfigError(f"{name} must be a whole number of days (0 or more), not {raw!r}")
    return int(raw)


AUTHORIZATIONS = ("sql", "ranger")


def _authorization(env: dict[str, str], suffix: str) -> str:
    """Who enforces the metastore's access: ``sql`` (default) or ``ranger``; another value stops the start."""
    value = env.get(f"METASTORE_AUTHORIZATION_{suffix}", "").strip().lower() or "sql"
    if value not in AUTHORIZATIONS:
        raise MetastoreConfigError(
            f"METASTORE_AUTHORIZATION_{suffix} is {value!r}; expected one of {', '.join(AUTHORIZATIONS)}."
        )
    return value


def _whitelist(env: dict[str, str], suffix: str) -> str:
    """The metastore's partition-name whitelist pattern, checked to be a regular expression."""
    pattern = env.get(f"METASTORE_PARTITION_NAME_WHITELIST_{suffix}", "")
    try:
        re.compile(pattern)
    except re.error as exc:
        message = f"METASTORE_PARTITION_NAME_WHITELIST_{suffix} is not a regular expression: {exc}"
        raise MetastoreConfigError(message) from exc
    return pattern


def _warehouse(env: dict[str, str], name: str, base_dir: Path) -> str:
    explicit = env.get(f"METASTORE_WAREHOUSE_{name.upper()}", "")
    if explicit or name != DEMO_METASTORE_NAME:
        return explicit
    return str(base_dir / "var" / "demo" / "warehouse")
