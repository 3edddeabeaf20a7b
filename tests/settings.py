"""
Settings for the test suite: the console's settings, with databases that do not depend on the environment.

``default`` (the console's own state) is PostgreSQL; Django's test runner creates ``test_catalog_admin_test``.
Seven metastores are registered, each a fixed test database that ``tests/fixtures/metastores.py``
drops, recreates, loads and seeds once per session:

* ``hive{23,31,40}_pg`` / ``hive{23,31,40}_my``: the official Hive schema scripts 2.3.0, 3.1.0 and
  4.0.0 (``4.0.0-derived``) on PostgreSQL and on MariaDB;
* ``hive_sqlite``: a 3.1.0 schema created by the project's own ``catalog_admin.metastore_ddl``.

The quick tier (``CATALOG_ADMIN_QUICK=1``, see ``tests/README.md``) registers one of the seven only, ``hive31_pg`` (the
default metastore), and leaves ``spark_pg`` out.

One more database, ``spark_pg`` (PostgreSQL, official 2.3.0 schema, loaded but not seeded), belongs to the PySpark
witness (``tests/fixtures/spark.py``). It is in ``DATABASES`` but not among the seven: ``tests/fixtures/spark.py``
registers its config (``SPARK_METASTORE_CONFIG``) in ``METASTORE_CONFIGS`` only while the Spark tests run.

The aliases go through ``catalog_admin.metastores.database_settings``, as in production.
Temporary files (warehouses, the SQLite metastore) live under ``$CATALOG_ADMIN_TEST_TMP``
(default: ``<system temp>/catalog-admin-tests``).
"""

import importlib
import os
import tempfile
from pathlib import Path

from catalog_admin.metastores import MetastoreConfig, database_settings

# Variables of catalog_admin.settings that would register a developer's own databases.
_ENVIRONMENT_DATABASES = ("DATABASE_URL", "DEFAULT_METASTORE", "METASTORE_URL", "METASTORES")


def _base_settings() -> dict[str, object]:
    """The upper-case values of ``catalog_admin.settings``, evaluated without the environment's databases."""
    saved = {name: os.environ.pop(name) for name in _ENVIRONMENT_DATABASES if name in os.environ}
    try:
        module = importlib.import_module("catalog_admin.settings")
    finally:
        os.environ.update(saved)
    return {name: value for name, value in vars(module).items() if name.isupper()}


_base = _base_settings()
globals().update(_base)
BASE_DIR: Path = _base["BASE_DIR"]  # type: ignore[assignment]

SECRET_KEY = "catalog-admin-tests-only"  # not a secret: tests only
DEBUG = False
STATIC_ROOT = None  # no collected files in tests: WhiteNoise serves static/ through the finders
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Optional suffix for every test database and the temp folder, so that two sessions on one machine do not
# drop each other's metastores (e.g. CATALOG_ADMIN_TEST_DB_SUFFIX=_ci1). Empty by default: fixed names.
_SUFFIX = os.environ.get("CATALOG_ADMIN_TEST_DB_SUFFIX", "")
if _SUFFIX and not _SUFFIX.replace("_", "").isalnum():
    raise ValueError("CATALOG_ADMIN_TEST_DB_SUFFIX may hold only letters, digits and '_'.")
# Under pytest-xdist (``-n 2``) each worker has its own metastores and temp folder, as pytest-django gives each its
# own console database.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_SUFFIX += f"_{_WORKER}" if _WORKER else ""
TEST_TMP_DIR = (
    Path(os.environ["CATALOG_ADMIN_TEST_TMP"]) / (_WORKER or ".")
    if os.environ.get("CATALOG_ADMIN_TEST_TMP")
    else Path(tempfile.gettempdir()) / f"catalog-admin-tests{_SUFFIX}"
)

_PG = "postgresql://postgres@127.0.0.1:5432"
_MY = "mysql://root@127.0.0.1:3306"

# alias -> (Hive schema version, official script under shared/fixtures/hive-schema; "" = the project's own DDL).
HIVE_TEST_METASTORES = {
    "hive23_pg": ("2.3.0", "2.3.0/hive-schema-2.3.0.postgres.sql"),
    "hive31_pg": ("3.1.0", "3.1.0/hive-schema-3.1.0.postgres.sql"),
    "hive40_pg": ("4.0.0", "4.0.0-derived/hive-schema-4.0.0-derived.postgres.sql"),
    "hive23_my": ("2.3.0", "2.3.0/hive-schema-2.3.0.mysql.sql"),
    "hive31_my": ("3.1.0", "3.1.0/hive-schema-3.1.0.mysql.sql"),
    "hive40_my": ("4.0.0", "4.0.0-derived/hive-schema-4.0.0-derived.mysql.sql"),
    "hive_sqlite": ("3.1.0", ""),
}

# The quick tier (CATALOG_ADMIN_QUICK=1): the default metastore only, no Spark metastore.
QUICK_METASTORE = "hive31_pg" if os.environ.get("CATALOG_ADMIN_QUICK", "").strip() not in ("", "0") else ""
if QUICK_METASTORE:
    HIVE_TEST_METASTORES = {QUICK_METASTORE: HIVE_TEST_METASTORES[QUICK_METASTORE]}


def _url(alias: str) -> str:
    if alias.endswith("_pg"):
        return f"{_PG}/ca_test_{alias}{_SUFFIX}"
    if alias.endswith("_my"):
        return f"{_MY}/ca_test_{alias}{_SUFFIX}"
    return f"sqlite:///{TEST_TMP_DIR / alias / 'metastore.sqlite3'}"


# Tests point SET LOCATION at scratch locations outside the warehouse (file:/x, hdfs://…): allowed here; the strict
# default is tested in tests/operations/test_containment.py. The seeded external tables' data is governed here (their
# rewrites and relocations are tested); the default, refused, in tests/operations/planners/test_rewrite_values.py.
METASTORE_CONFIGS = [
    MetastoreConfig(
        name=alias,
        url=_url(alias),
        warehouse=str(TEST_TMP_DIR / alias / "warehouse"),
        allow_outside_roots=True,
        governs_external_data=True,
    )
    for alias in HIVE_TEST_METASTORES
]
DEFAULT_METASTORE = "hive31_pg"

# The Spark witness's metastore: Spark's Hive 2.3 client writes it, so it gets the official 2.3.0 schema and no seed.
SPARK_TEST_METASTORES = {} if QUICK_METASTORE else {"spark_pg": ("2.3.0", "2.3.0/hive-schema-2.3.0.postgres.sql")}
# The differential tests keep partitions and locations in "outside" and "elsewhere" folders beside the warehouse, as
# a site would under a second governed area: they are the metastore's extra roots.
SPARK_METASTORE_CONFIG = MetastoreConfig(
    name="spark_pg",
    url=_url("spark_pg"),
    warehouse=str(TEST_TMP_DIR / "spark_pg" / "warehouse"),
    extra_roots=tuple(str(TEST_TMP_DIR / "spark_pg" / folder) for folder in ("outside", "elsewhere")),
)

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        # A job worker process a test starts (tests/fixtures/workers.py) uses the test runner's database as it is.
        "NAME": os.environ.get("CATALOG_ADMIN_TEST_WORKER_DB") or f"catalog_admin_test{_SUFFIX}",
        "USER": "postgres",
        "HOST": "127.0.0.1",
        "PORT": "5432",
    },
    **{
        config.alias: database_settings(config, BASE_DIR)
        for config in [*METASTORE_CONFIGS, *([] if QUICK_METASTORE else [SPARK_METASTORE_CONFIG])]
    },
}

# Spark jobs' working directories (plans, progress, logs, manifests) stay in the session's temp folder.
CATALOG_SPARK_WORK_DIR = TEST_TMP_DIR / "spark-jobs"
CATALOG_SPARK_LOCAL_DIR = TEST_TMP_DIR / "spark-jobs"

# Tests roll their metastores back and seed them again, so the same table id and partition stamp recur with other
# content: nothing is remembered between views (tests/catalog_admin/selectors/test_table_aggregates.py turns the
# in-memory cache on for itself).
CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
