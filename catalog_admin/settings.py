"""
Django settings for catalog-admin, configured from the environment (12-factor).

``DATABASE_URL`` is the console's own state (SQLite under ``var/`` by default).
The governed metastores come from ``METASTORES`` / ``METASTORE_URL`` (see ``catalog_admin.metastores``).

With the root ``urls`` this module is the project's composition root: the only place in ``catalog_admin`` that names
``operations`` (installed app, schema enum names). The ``catalog_admin`` app itself never imports ``operations``;
``operations`` adds to its pages through ``catalog_admin.extensions`` (see ``tests/catalog_admin/test_layering.py``).
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
import pymysql
from django.core.exceptions import ImproperlyConfigured

from catalog_admin.auth.config import sign_in_settings
from catalog_admin.filesystem_options import filesystem_options, rename_limit_bytes
from catalog_admin.mail_config import email_settings
from catalog_admin.metastores import database_settings, parse_metastores
from catalog_admin.secrets import local_secret_key
from catalog_admin.utils.scrape_access import parse_networks

pymysql.install_as_MySQLdb()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CATALOG_ADMIN_VAR", BASE_DIR / "var"))

DEBUG = os.environ.get("DJANGO_DEBUG", "0") == "1"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or local_secret_key(VAR_DIR / "secret_key")
ALLOWED_HOSTS = [h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_tasks",
    "django_tasks_db",
    "axes",
    "catalog_admin",
    "catalog_admin.tokens",
    "operations",
]

MIDDLEWARE = [
    "catalog_admin.middleware.RequestLatencyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "catalog_admin.middleware.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "catalog_admin.middleware.LoginRequiredMiddleware",
    "catalog_admin.middleware.RequestBodyLimitMiddleware",
    "catalog_admin.middleware.MetastoreErrorMiddleware",
    "axes.middleware.AxesMiddleware",  # answers a locked-out sign-in with 429
]

ROOT_URLCONF = "catalog_admin.urls"
WSGI_APPLICATION = "catalog_admin.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "catalog_admin.context_processors.metastores",
            ],
        },
    },
]

# Databases: the console's own state plus one alias per registered metastore.
METASTORE_CONFIGS, DEFAULT_METASTORE = parse_metastores(dict(os.environ), BASE_DIR)
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'console.sqlite3'}"),
        conn_max_age=60,
    ),
    **{config.alias: database_settings(config, BASE_DIR) for config in METASTORE_CONFIGS},
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Concurrent writers (two approvals at once) wait for each other instead of failing with "database is locked":
    # every transaction takes SQLite's write lock when it begins, and waits up to 20 s for it.
    DATABASES["default"].setdefault("OPTIONS", {}).update(transaction_mode="IMMEDIATE", timeout=20)
DATABASE_ROUTERS = ["catalog_admin.routers.MetastoreRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# Sign-in (catalog_admin/auth/config.py, README "Sign-in"): local accounts (CATALOG_LOCAL_ACCOUNTS, default true) and
# LDAP/Active Directory when CATALOG_LDAP_URL is set (AUTHENTICATION_BACKENDS, AUTH_LDAP_*), the directory groups
# that give roles and approver scopes (CATALOG_ROLE_GROUPS, CATALOG_APPROVER_SCOPE_GROUPS), CATALOG_APPROVER_SCOPES,
# and the lockout after repeated failures (django-axes: CATALOG_LOGIN_FAILURE_LIMIT, CATALOG_LOGIN_LOCKOUT_MINUTES).
globals().update(sign_in_settings(os.environ))
# E-mail (catalog_admin/mail_config.py, README "Configuration"): EMAIL_URL or EMAIL_*; none set = no e-mail.
globals().update(email_settings(os.environ))
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "operations:home"  # sign-in lands on Home: the work waiting
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False  # English only: no translation lookups on every rendered value
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
# WhiteNoise serves the static files from the WSGI process (gunicorn in bin/serve and bin/demo). Here it finds them in
# static/ directly; catalog_admin.settings_production serves only the collected, hashed and compressed copies.
WHITENOISE_USE_FINDERS = True

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "catalog_admin.api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "catalog_admin.api.exception_handlers.api_exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "catalog_admin.api.parsers.DepthLimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "UNAUTHENTICATED_USER": None,
}
# API tokens (catalog_admin/auth/tokens.py): every token expires; a new one lasts this many days unless its owner picks
# fewer or more, never more than the maximum.
CATALOG_API_TOKEN_TTL_DAYS = int(os.environ.get("CATALOG_API_TOKEN_TTL_DAYS", "90"))
CATALOG_API_TOKEN_MAX_DAYS = int(os.environ.get("CATALOG_API_TOKEN_MAX_DAYS", "365"))
if not 1 <= CATALOG_API_TOKEN_TTL_DAYS <= CATALOG_API_TOKEN_MAX_DAYS:
    raise ImproperlyConfigured(
        "CATALOG_API_TOKEN_TTL_DAYS must be at least 1 and at most CATALOG_API_TOKEN_MAX_DAYS "
        f"({CATALOG_API_TOKEN_TTL_DAYS} and {CATALOG_API_TOKEN_MAX_DAYS} given)."
    )
# An Idempotency-Key replays its first answer for this long; afterwards it is forgotten (purged by run_jobs).
CATALOG_IDEMPOTENCY_KEY_TTL = timedelta(hours=int(os.environ.get("CATALOG_IDEMPOTENCY_KEY_TTL_HOURS", "24")))
# A job silent (no progress, no log line) for longer than this counts as dead: its request can then be settled.
CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS = int(os.environ.get("CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS", "300"))
# /metrics (operations/metrics.py): a bearer token and/or networks that may scrape without it; neither: refused.
CATALOG_METRICS_TOKEN = os.environ.get("CATALOG_METRICS_TOKEN", "")
CATALOG_METRICS_ALLOWED_NETWORKS = parse_networks(os.environ.get("CATALOG_METRICS_ALLOWED_NETWORKS", ""))
# Each metastore's SELECT 1 in a scrape waits at most this long (it is then reported down).
CATALOG_METRICS_HEALTH_TIMEOUT_SECONDS = float(os.environ.get("CATALOG_METRICS_HEALTH_TIMEOUT_SECONDS", "2"))
# The worker's housekeeping (manage.py run_jobs): how often each task runs.
CATALOG_HOUSEKEEPING_STUCK_JOBS_SECONDS = float(os.environ.get("CATALOG_HOUSEKEEPING_STUCK_JOBS_SECONDS", "60"))
CATALOG_HOUSEKEEPING_IDEMPOTENCY_SECONDS = float(os.environ.get("CATALOG_HOUSEKEEPING_IDEMPOTENCY_SECONDS", "3600"))
CATALOG_HOUSEKEEPING_RELOCATIONS_CLEANUP_SECONDS = float(
    os.environ.get("CATALOG_HOUSEKEEPING_RELOCATIONS_CLEANUP_SECONDS", "3600")
)
CATALOG_HOUSEKEEPING_NOTIFICATIONS_SECONDS = float(os.environ.get("CATALOG_HOUSEKEEPING_NOTIFICATIONS_SECONDS", "5"))
# Notifications (operations/notifications/): the outbox's sends are tried this often before they are kept as failed;
# a webhook's POST waits this long; messages link to the console at CATALOG_BASE_URL (e.g. https://catalog.example.com).
CATALOG_NOTIFICATION_MAX_ATTEMPTS = int(os.environ.get("CATALOG_NOTIFICATION_MAX_ATTEMPTS", "8"))
CATALOG_WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("CATALOG_WEBHOOK_TIMEOUT_SECONDS", "5"))
CATALOG_BASE_URL = os.environ.get("CATALOG_BASE_URL", "")
# Background work runs in worker processes (``manage.py run_jobs``, or django-tasks-db's ``db_worker``) that take
# tasks from the console's own database (Django's Tasks API through django-tasks). "eager" runs a job's task inline
# when the enqueuing transaction commits: for tests only.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
# Aggregates over a big table's partitions a page remembers between views (catalog_admin/selectors/table_aggregates.py):
# in each process's memory, under the table's partition stamp, for at most this many seconds.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "catalog-admin"}}
CATALOG_TABLE_AGGREGATE_SECONDS = int(os.environ.get("CATALOG_TABLE_AGGREGATE_SECONDS", "300"))
CATALOG_PARTITION_STAMP_SECONDS = float(os.environ.get("CATALOG_PARTITION_STAMP_SECONDS", "2"))
CATALOG_JOBS_MODE = os.environ.get("CATALOG_JOBS_MODE", "tasks")
# Where Spark programs run (operations/spark/engine.py): local[*] (the embedded default), spark://host:port
# (standalone), yarn, k8s://https://host:port (through spark-submit) or sc://host:port (Spark Connect).
CATALOG_SPARK_MASTER = os.environ.get("CATALOG_SPARK_MASTER", "local[*]")
# A standalone master's web UI (http://host:8080): cancelling a job also kills its application there.
CATALOG_SPARK_MASTER_UI = os.environ.get("CATALOG_SPARK_MASTER_UI", "")
# Extra Spark configuration for every program, as "key=value" pairs separated by whitespace or commas.
CATALOG_SPARK_CONF = os.environ.get("CATALOG_SPARK_CONF", "")
# Where a Spark driver writes its progress and manifest, and finds a cancel request: a local directory, or an
# object-store/HDFS URI (s3a://bucket/prefix) when the driver does not run on this host (cluster deploy mode).
CATALOG_SPARK_WORK_DIR = os.environ.get("CATALOG_SPARK_WORK_DIR", str(VAR_DIR / "spark-jobs"))
# The host name a worker gives itself (Job.worker, a handed-over driver's host; default: the machine's own). Workers
# on one host share it: a successor adopts a handed-over driver only on the host that launched it; elsewhere it asks
# the driver to stop through the work location and waits for its exit marker (operations/services/spark_jobs.py).
CATALOG_WORKER_HOST = os.environ.get("CATALOG_WORKER_HOST", "")
# How long a worker that cannot see a Spark driver's process (another host, cluster deploy mode) waits for the driver
# to confirm it stopped (its exit marker in the work location) before it fails the job with the stop unconfirmed.
CATALOG_SPARK_STOP_WAIT_SECONDS = float(os.environ.get("CATALOG_SPARK_STOP_WAIT_SECONDS", "60"))
# A worker on another host follows a handed-over Spark driver through its work location under a lease of this many
# seconds: the driver stops itself once its follower has not renewed it for that long, and the follower stops
# following a driver that has not beaten for that long (at least 10).
CATALOG_SPARK_LEASE_SECONDS = float(os.environ.get("CATALOG_SPARK_LEASE_SECONDS", "30"))
if CATALOG_SPARK_LEASE_SECONDS < 10:
    raise ImproperlyConfigured(
        f"CATALOG_SPARK_LEASE_SECONDS={CATALOG_SPARK_LEASE_SECONDS:g} is below 10: a lease must outlast several of "
        "the driver's beats (every 2 s) and of its follower's renewals."
    )
# How long a handed-over job waits before a worker tries again, after a worker that cannot reach its driver's work
# location left it (another may; a worker on the driver's host always does).
CATALOG_JOB_ADOPTION_RETRY_SECONDS = float(os.environ.get("CATALOG_JOB_ADOPTION_RETRY_SECONDS", "10"))
# Where a worker keeps a driver's launch files (its job.json, the package zip, the driver's log): always local.
CATALOG_SPARK_LOCAL_DIR = VAR_DIR / "spark-jobs"
# client (the default) or cluster: YARN and Kubernetes then run the driver on the cluster (spark-submit
# --deploy-mode cluster; needs an object-store or HDFS CATALOG_SPARK_WORK_DIR); a standalone master refuses cluster
# mode for Python applications, so drivers stay in client mode there (the job log says so).
CATALOG_SPARK_DEPLOY_MODE = os.environ.get("CATALOG_SPARK_DEPLOY_MODE", "client")
# Where a merge copies (operations/merge/engine.py): auto (Spark when CATALOG_SPARK_MASTER is not local[...]), spark
# (the engine above, local[*] included) or local (in the worker).
CATALOG_MERGE_ENGINE = os.environ.get("CATALOG_MERGE_ENGINE", "auto")
# What Hive itself would take, for the comparison in every preview (operations/planners/common.py): a fixed cost,
# plus one per partition Hive rewrites and one per statistics row it deletes. The defaults are calibrated by
# benchmarks/alter.py against Spark's Hive 2.3 client on a local PostgreSQL; production Hive is usually slower,
# so set these from a measurement of your own.
CATALOG_HIVE_COST = {
    "base_seconds": float(os.environ.get("CATALOG_HIVE_COST_BASE_SECONDS", "0.43")),
    "partition_ms": float(os.environ.get("CATALOG_HIVE_COST_PARTITION_MS", "2.05")),
    "statistic_ms": float(os.environ.get("CATALOG_HIVE_COST_STATISTIC_MS", "0.14")),
}
# Object stores and HDFS (catalog_admin/filesystem_options.py): endpoints and profiles from the environment, never
# credentials in the repository. An ALTER "renaming" more than CATALOG_OBJECT_STORE_RENAME_LIMIT_BYTES on an object
# store is refused in the request thread: relocate the data with SET LOCATION … WITH DATA (a Spark job) instead.
CATALOG_FILESYSTEMS = filesystem_options(os.environ, tuple(config.name for config in METASTORE_CONFIGS))
CATALOG_OBJECT_STORE_RENAME_LIMIT_BYTES = rename_limit_bytes(os.environ)
# A relocation keeps the source data this long after the swap (revert swaps back meanwhile); then cleanup removes it.
CATALOG_RELOCATION_RETENTION = timedelta(hours=int(os.environ.get("CATALOG_RELOCATION_RETENTION_HOURS", "168")))
# CONCATENATE / SET FILEFORMAT … WITH DATA: the size of the files a rewrite writes, unless the operation names one.
CATALOG_COMPACT_TARGET_FILE_BYTES = int(os.environ.get("CATALOG_COMPACT_TARGET_FILE_BYTES", str(128 * 1024 * 1024)))
# A relocation preview lists at most this many partitions' files and extrapolates the rest (the sample is shown).
CATALOG_RELOCATION_SAMPLE_PARTITIONS = int(os.environ.get("CATALOG_RELOCATION_SAMPLE_PARTITIONS", "200"))
# A DROP TABLE preview counts the files of at most this many partition directories inside the table's directory and
# scales them to all (everything else in it is counted in full; the sample is shown): its data moves in one rename.
CATALOG_DROP_SAMPLE_PARTITIONS = int(os.environ.get("CATALOG_DROP_SAMPLE_PARTITIONS", "1000"))
# A plan of deletes removing at least this many rows that other rows reference checks each foreign key once, after
# its last statement, instead of PostgreSQL's per-row triggers (operations/services/batched_foreign_keys.py).
CATALOG_BATCHED_FOREIGN_KEY_ROWS = int(os.environ.get("CATALOG_BATCHED_FOREIGN_KEY_ROWS", "5000"))
SPECTACULAR_SETTINGS = {
    "TITLE": "catalog-admin API",
    "DESCRIPTION": "Browse and govern Apache Hive metastores.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI and Redoc from drf-spectacular-sidecar's static files: the docs work without internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Three "state" enums: name each after its choices.
    "ENUM_NAME_OVERRIDES": {
        "ChangeRequestStateEnum": "operations.choices.ChangeRequestState",
        "JobStateEnum": "operations.choices.JobState",
        "ExecutionStateEnum": "operations.models.executions.Execution.State",
    },
}

# Request bodies: statements, reasons and comments, never files. A larger body is refused with 413 payload_too_large
# (catalog_admin.middleware.RequestBodyLimitMiddleware); a JSON body nested deeper than 32 levels with 400 invalid_json.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

# Every response's Content-Security-Policy (catalog_admin.middleware.ContentSecurityPolicyMiddleware): scripts and
# styles from our own static files only, no inline script, no eval (htmx runs with allowEval off, see base.html).
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

# Browsing: page sizes accepted from clients.
CATALOG_PAGE_SIZE = 50
# Hive's Initiator thresholds for "needs compaction" (hive.compactor.delta.num.threshold, .delta.pct.threshold,
# .abortedtxn.threshold; Hive's defaults) and how many directories the metastore-wide list may read.
CATALOG_COMPACTION_THRESHOLDS = {
    "delta_num": int(os.environ.get("CATALOG_COMPACTION_DELTA_NUM_THRESHOLD", "10")),
    "delta_pct": float(os.environ.get("CATALOG_COMPACTION_DELTA_PCT_THRESHOLD", "0.1")),
    "aborted": int(os.environ.get("CATALOG_COMPACTION_ABORTED_THRESHOLD", "1000")),
}
CATALOG_ACID_SCAN_LIMIT = int(os.environ.get("CATALOG_ACID_SCAN_LIMIT", "5000"))
CATALOG_MAX_PAGE_SIZE = 500

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact_secrets": {"()": "catalog_admin.utils.text.RedactSecrets"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["redact_secrets"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
