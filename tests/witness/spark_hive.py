"""Independent witness of what Hive 2.3 itself does to a metastore.

PySpark ships Hive's 2.3 metastore code (HMSHandler -> HiveAlterHandler -> ObjectStore on
DataNucleus). With Hive support enabled and no ``hive.metastore.uris``, Spark runs that code
in-process against the JDBC database we point it at. Tests use it to produce a metastore exactly
as Hive 2.3 would write it, and to check that what the console writes reads back correctly
through a real Hive client. Recipe: ``shared/docs/spark-hive-witness.md``.

Only one SparkSession (and one JVM) can exist per Python process, so call
``start_spark_hive`` once per test session (a session-scoped pytest fixture) and
``stop_spark`` at the end. Use it only with the official 2.3.0 schema.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg2
from psycopg2 import sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PG_HOST = "127.0.0.1"
PG_PORT = 5432
PG_USER = "postgres"
# From Debian's libpostgresql-jdbc-java (apt-get install -y libpostgresql-jdbc-java).
JDBC_JAR = Path("/usr/share/java/postgresql.jar")

REPO_ROOT = Path(__file__).resolve().parents[2]


def shared_dir() -> Path:
    """The project's shared/ folder (``$CATALOG_ADMIN_SHARED`` or ``<repo>/../shared``)."""
    return Path(os.environ.get("CATALOG_ADMIN_SHARED", REPO_ROOT.parent / "shared"))


def schema_dir() -> Path:
    return shared_dir() / "fixtures" / "hive-schema" / "2.3.0"


def create_metastore_database(dbname: str) -> None:
    """(Re)create PostgreSQL database ``dbname`` and load the official Hive 2.3.0 schema."""
    conn = psycopg2.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres")
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (dbname,),
            )
            ident = sql.Identifier(dbname)
            cur.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(ident))
            cur.execute(sql.SQL("CREATE DATABASE {}").format(ident))
    finally:
        conn.close()
    # The script includes hive-txn-schema-2.3.0.postgres.sql by a relative path: run it in place.
    cmd = ["psql", "-q", "-h", PG_HOST, "-p", str(PG_PORT), "-U", PG_USER, "-d", dbname]
    cmd += ["-v", "ON_ERROR_STOP=1", "-f", "hive-schema-2.3.0.postgres.sql"]
    subprocess.run(cmd, cwd=schema_dir(), check=True, stdout=subprocess.DEVNULL)


# Hive's FunctionRegistry (any SELECT Hive's Driver analyses: CREATE VIEW; DROP DATABASE's DDLTask) loads
# LLAP's signer interface, which Spark's jars leave out: this stub of its shape lets the class load
# (shared/docs/spark-hive-witness.md, "Hive's own Driver").
LLAP_SIGNER_STUB = """package org.apache.hadoop.hive.llap.security;

public interface LlapSigner {
  interface Signable {
    void setSignInfo(int masterKeyId);
    byte[] serialize() throws java.io.IOException;
  }
  class SignedMessage {
    public byte[] message;
    public byte[] signature;
  }
  SignedMessage serializeAndSign(Signable message) throws java.io.IOException;
}
"""


def llap_signer_stub(directory: Path) -> Path | None:
    """The stub's class directory under ``directory`` (compiled once with ``javac``; ``None`` without a JDK)."""
    classes = directory / "llap-stub"
    if (classes / "org/apache/hadoop/hive/llap/security/LlapSigner.class").is_file():
        return classes
    source = directory / "llap-stub-src" / "LlapSigner.java"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(LLAP_SIGNER_STUB)
    try:
        subprocess.run(["javac", "-d", str(classes), str(source)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return classes


def start_spark_hive(dbname: str, warehouse: Path, conf: dict[str, str] | None = None) -> SparkSession:
    """Start the (single, per-process) SparkSession whose Hive 2.3 client uses ``dbname`` (plus any ``conf``).

    Start-up takes ~9 s (plus ~5 s for the Hive client on the first metastore statement):
    call it once per test session, not per test. The JVM and its Hive client are bound to
    the first ``dbname``; a later call in the same process returns that same session.
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no loopback-hostname warning
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Python workers use the venv (programs import fsspec)
    warehouse = warehouse.resolve()
    warehouse.mkdir(parents=True, exist_ok=True)
    jar = str(JDBC_JAR)
    stub = llap_signer_stub(warehouse.parent)
    class_path = f"{jar}:{stub}" if stub is not None else jar
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("catalog-admin-hive-witness")
        .config("spark.sql.catalogImplementation", "hive")
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:postgresql://{PG_HOST}:{PG_PORT}/{dbname}",
        )
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionDriverName",
            "org.postgresql.Driver",
        )
        .config("spark.hadoop.javax.jdo.option.ConnectionUserName", PG_USER)
        .config("spark.hadoop.datanucleus.schema.autoCreateAll", "false")
        .config("spark.hadoop.hive.metastore.schema.verification", "false")
        .config("spark.sql.warehouse.dir", warehouse.as_uri())
        .config("spark.jars", jar)
        .config("spark.driver.extraClassPath", class_path)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.log.level", "WARN")
        .config(map=conf or {})
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    return spark


def stop_spark(spark: SparkSession) -> None:
    """Stop the session (and its JVM-side Hive client)."""
    spark.stop()
