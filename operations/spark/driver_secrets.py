"""
Credentials for a driver that runs on the cluster (``CATALOG_SPARK_DEPLOY_MODE=cluster`` on YARN or Kubernetes).

A client-mode driver is a child of the worker and gets its credentials (the metastore's S3 keys, a merge's database
passwords) in its environment. A cluster-mode driver runs in a container the cluster manager starts, whose
environment is set by Spark settings: ``spark.yarn.appMasterEnv.<NAME>`` (YARN) or ``spark.kubernetes.driverEnv.<NAME>``
(Kubernetes). Those settings reach ``spark-submit`` in a properties file that lives in memory only (``memfd``, read
through ``/dev/fd/<n>`` with ``--load-spark-defaults``, so the cluster's ``spark-defaults.conf`` still applies):
never in the command line (which ``ps`` shows), a file or a log. Spark's UI and event log redact them by their names
(``spark.redaction.regex``: ``secret``, ``password``, ``token``). A variable the operator's ``CATALOG_SPARK_CONF``
already sets for the driver, e.g. from a Kubernetes secret (``spark.kubernetes.driver.secretKeyRef.<NAME>``), is left
to it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ("DRIVER_ENVIRONMENT", "cluster_driver_environment", "java_properties", "memory_file")

# The setting prefix through which each cluster manager sets the environment of a driver it runs.
DRIVER_ENVIRONMENT = {"yarn": "spark.yarn.appMasterEnv.", "kubernetes": "spark.kubernetes.driverEnv."}
# Settings through which an operator gives the driver a variable from elsewhere (a Kubernetes secret).
OPERATOR_SOURCES = ("spark.kubernetes.driver.secretKeyRef.",)
# Java's Properties.load reads these escaped; everything outside printable ASCII goes as \uXXXX.
_ESCAPES = {
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\f": "\\f",
    "=": "\\=",
    ":": "\\:",
    "#": "\\#",
    "!": "\\!",
}


def cluster_driver_environment(kind: str, conf: Mapping[str, str], secrets: Mapping[str, str]) -> dict[str, str]:
    """The Spark settings that give a driver run by the ``kind`` cluster manager ``secrets`` as environment
    variables, leaving out a variable ``conf`` (the operator's) already sets for the driver."""
    prefix = DRIVER_ENVIRONMENT[kind]
    taken = {key[len(source) :] for key in conf for source in (prefix, *OPERATOR_SOURCES) if key.startswith(source)}
    return {f"{prefix}{name}": value for name, value in secrets.items() if name not in taken}


def java_properties(values: Mapping[str, str]) -> bytes:
    """``values`` as a ``.properties`` file that Spark reads back exactly. Spark trims every value it reads from
    one, so a value that begins or ends with a blank or a control character is refused (ValueError naming its key,
    never the value)."""
    trimmed = [key for key, value in values.items() if value and (value[0] <= " " or value[-1] <= " ")]
    if trimmed:
        raise ValueError(
            f"{', '.join(trimmed)}: the value begins or ends with a blank, which Spark would cut off; the credential "
            "cannot reach a driver on the cluster this way"
        )
    return "".join(f"{_escaped(key)}={_escaped(value)}\n" for key, value in values.items()).encode("ascii")


def memory_file(content: bytes) -> int:
    """A descriptor of an anonymous in-memory file holding ``content`` (closed on exec unless passed on: a child
    given it opens ``/dev/fd/<n>`` as a file of its own, from the start)."""
    descriptor = os.memfd_create("catalog-admin-driver-settings", os.MFD_CLOEXEC)
    try:
        os.write(descriptor, content)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _escaped(text: str) -> str:
    return "".join(_ESCAPES.get(char, char if " " <= char <= "~" else _unicode_escape(char)) for char in text)


def _unicode_escape(char: str) -> str:
    encoded = char.encode("utf-16-be")  # a character beyond the BMP becomes its surrogate pair, as Java reads it
    return "".join(f"\\u{int.from_bytes(encoded[i : i + 2], 'big'):04x}" for i in range(0, len(encoded), 2))
