"""
How the console reaches object stores and HDFS: options read from the environment (12-factor), never from the repo.

Globally, ``CATALOG_S3_ENDPOINT_URL`` (an S3-compatible server; AWS when unset), ``CATALOG_S3_REGION`` and
``CATALOG_S3_PROFILE`` (a named profile of ``~/.aws/credentials``); credentials otherwise come from the standard
``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` variables or the machine's role, as botocore finds them. Per
metastore, ``METASTORE_S3_ENDPOINT_<NAME>``, ``METASTORE_S3_REGION_<NAME>`` and ``METASTORE_S3_PROFILE_<NAME>``
override the global ones for locations of that metastore. HDFS is reached through ``hdfs-native``, which reads the
cluster's ``core-site.xml``/``hdfs-site.xml`` from ``HADOOP_CONF_DIR`` (name services, HA, Kerberos);
``CATALOG_HDFS_OPTIONS`` adds Hadoop configuration keys (``key=value,key=value``).
``CATALOG_OBJECT_STORE_RENAME_LIMIT_BYTES`` (default 1 GiB) is the largest directory an ALTER may "rename" on an
object store in the request thread. Without any S3 option or AWS credential variable, S3 is not configured and the
console reports s3 locations as unreachable (set ``CATALOG_S3_REGION`` to use a machine role's credentials).

The options are plain JSON (no secrets): a Spark program's plan carries them to its executors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ("DEFAULT_RENAME_LIMIT_BYTES", "OBJECT_STORE_SCHEMES", "filesystem_options", "rename_limit_bytes")

OBJECT_STORE_SCHEMES = frozenset({"s3", "s3a", "s3n"})
DEFAULT_RENAME_LIMIT_BYTES = 1 << 30

_S3_KEYS = {"ENDPOINT": "endpoint_url", "REGION": "region", "PROFILE": "profile"}


def filesystem_options(env: Mapping[str, str], metastores: tuple[str, ...] = ()) -> dict[str, Any]:
    """``{"s3": {...}, "hdfs": {...}, "metastores": {name: {"s3": {...}}}}`` from an environment mapping."""
    s3 = _s3(env, "CATALOG_S3_{}", {"ENDPOINT": "CATALOG_S3_ENDPOINT_URL"})
    pairs = (item.partition("=") for item in env.get("CATALOG_HDFS_OPTIONS", "").split(",") if "=" in item)
    hdfs = {key.strip(): value.strip() for key, _, value in pairs}
    per_metastore = {}
    for name in metastores:
        own = _s3(env, "METASTORE_S3_{}_" + name.upper(), {})
        if own:
            per_metastore[name] = {"s3": {**s3, **own}}
    return {"s3": s3, "hdfs": hdfs, "metastores": per_metastore}


def rename_limit_bytes(env: Mapping[str, str]) -> int:
    return int(env.get("CATALOG_OBJECT_STORE_RENAME_LIMIT_BYTES", DEFAULT_RENAME_LIMIT_BYTES))


def _s3(env: Mapping[str, str], pattern: str, renamed: dict[str, str]) -> dict[str, str]:
    found = {}
    for suffix, option in _S3_KEYS.items():
        value = env.get(renamed.get(suffix, pattern.format(suffix)), "").strip()
        if value:
            found[option] = value
    return found
