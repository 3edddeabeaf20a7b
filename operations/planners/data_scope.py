"""
The scope of heavy data work (relocate; compact and convert reuse it): what a job reads and writes, what it may cost,
and what must stop it, all by pure reads.

* :func:`measure`: files and bytes of a set of unit directories (partitions, or a table root) from listings through
  the filesystem interface (object stores too). Beyond ``CATALOG_RELOCATION_SAMPLE_PARTITIONS`` units a deterministic
  sample is listed: that many units evenly spaced over the units in their order (by partition name), scaled up to the
  total; the value says it is an estimate, of how many units, and on what basis. Listed files are bucketed by size
  (the small-file histogram, the table page's buckets).
* :func:`estimate_duration`: phase by phase (Spark's start-up on the engine, the work by bytes, the swap by units), each
  from the last succeeded jobs of the same kind on the same engine that measured theirs, with the basis stated; the
  earlier jobs' whole-run throughput before any did; "no basis yet" before the first.
* :func:`data_work_blockers` / :func:`data_work_warnings`: transactional tables, open locks or transactions, a
  filesystem the job cannot reach (:func:`engine_reach_blockers`), bucketing a rewrite would break; engines that cache
  locations and downstream readers.
* :func:`symlink_blockers`: a symbolic link in the listed data (a file, a directory, or the unit directory itself or
  one above it) blocks the job naming it; the filesystem never follows one either (``catalog_admin.locations``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from statistics import median
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.filesystem_options import OBJECT_STORE_SCHEMES
from catalog_admin.locations import FileEntry, filesystem_for
from catalog_admin.models import BucketingColumn
from catalog_admin.object_stores import credentials_environment
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.partition_charts import FILE_SIZE_BUCKETS
from operations.containment import NAMED_LINKS, named_links
from operations.estimates import fitted, measured_phases, measured_startups, measured_throughput
from operations.planners.common import acid_warnings
from operations.planners.spark_tables import spark_bucketing_blockers
from operations.preview import DataScope, DurationEstimate, EstimatePhase
from operations.rules import Finding
from operations.table_state import TableState

__all__ = (
    "DataScope",
    "DurationEstimate",
    "data_work_blockers",
    "data_work_warnings",
    "engine_reach_blockers",
    "estimate_duration",
    "external_data_blockers",
    "measure",
    "refuse_symlinks",
    "sample_indices",
    "sampled_listings",
    "scope_of",
    "symlink_blockers",
)

RULE = "data_work"
#: Finished jobs whose median throughput estimates the next one's duration.
THROUGHPUT_JOBS = 10


# Size -------------------------------------------------------------------------------------------------------------


def sample_indices(total: int, size: int) -> list[int]:
    """``size`` indices evenly spaced over ``range(total)``, first and last included (all of them when fewer)."""
    if total <= size:
        return list(range(total))
    if size <= 1:
        return [0][:size]
    return sorted({round(i * (total - 1) / (size - 1)) for i in range(size)})


def _bucket(size: int) -> int:
    for index, (_, bound) in enumerate(FILE_SIZE_BUCKETS):
        if bound is None or size < bound:
            return index
    return len(FILE_SIZE_BUCKETS) - 1


def measure(
    metastore: Metastore, sources: Sequence[str], *, destination: str = "", sample: int | None = None
) -> DataScope:
    """List ``sources`` (all, or a deterministic sample of ``sample`` evenly spaced ones) and scale to the total."""
    listings = sampled_listings(metastore, sources, sample)
    ends = [*sources[:1], *([destination] if destination else [])]
    return scope_of(metastore, listings, units=len(sources), ends=ends)


def sampled_listings(
    metastore: Metastore, sources: Sequence[str], sample: int | None = None
) -> list[Sequence[FileEntry]]:
    """The file listings of ``sample`` (``CATALOG_RELOCATION_SAMPLE_PARTITIONS`` by default) evenly spaced
    ``sources``, all of them when fewer."""
    limit = settings.CATALOG_RELOCATION_SAMPLE_PARTITIONS if sample is None else sample
    if limit < 1:
        raise ImproperlyConfigured(
            f"CATALOG_RELOCATION_SAMPLE_PARTITIONS must be at least 1 (the units listed to size data work), not {limit}"
        )
    picked = [sources[i] for i in sample_indices(len(sources), limit)]
    return [filesystem_for(source, metastore.name).list_files(source) or () for source in picked]


def scope_of(
    metastore: Metastore, listings: Sequence[Iterable[FileEntry]], *, units: int, ends: Sequence[str]
) -> DataScope:
    """The scope of ``units`` directories from the listings of some of them (all: exact; fewer: scaled up), with the
    small-file histogram of the listed files; ``ends`` (source and destination) tell whether a rename copies."""
    counts = [[0, 0] for _ in FILE_SIZE_BUCKETS]
    files = size = 0
    for listing in listings:
        for entry in listing:
            files, size = files + 1, size + entry.size
            bucket = counts[_bucket(entry.size)]
            bucket[0], bucket[1] = bucket[0] + 1, bucket[1] + entry.size
    scale = units / len(listings) if listings else 0
    return DataScope(
        units=units,
        sampled_units=len(listings),
        files=round(files * scale),
        bytes=round(size * scale),
        sample_files=files,
        sample_bytes=size,
        histogram=tuple((label, n, b) for (label, _), (n, b) in zip(FILE_SIZE_BUCKETS, counts, strict=True)),
        copy_and_delete=any(getattr(filesystem_for(e, metastore.name), "renames_by_copy", False) for e in ends),
    )


# Duration ---------------------------------------------------------------------------------------------------------


def estimate_duration(
    kind: str,
    size: int,
    engine: str | None = None,
    last: int = THROUGHPUT_JOBS,
    program: str | None = None,
    *,
    units: int = 0,
    work: str = "copy",
) -> DurationEstimate:
    """How long a ``kind`` job of ``size`` bytes over ``units`` units may take on ``engine`` (the configured Spark
    master by default), phase by phase from the last ``last`` succeeded ``kind`` jobs (of ``program``) that measured
    theirs (:func:`operations.estimates.measured_phases`): Spark's start-up on the engine, the ``work`` (copy,
    rewrite, scan) by bytes and the swap by units. Before any such job, the earlier jobs' whole-run throughput
    (:func:`operations.estimates.measured_throughput`); before any job at all, no basis (the start-up alone when the
    engine ran other jobs)."""
    engine = engine or settings.CATALOG_SPARK_MASTER
    runs = measured_phases(kind, engine=engine, last=last, program=program)
    startups = measured_startups(engine=engine, last=last)
    startup = EstimatePhase(
        "startup", "Spark start-up", round(median(startups), 1) if startups else None,
        f"median of {len(startups)} earlier start-up(s) on {engine}: the driver's JVM, its Spark session and "
        "executors, before the first unit" if startups else f"no basis yet: no earlier job on {engine}",
    )  # fmt: skip
    if runs:
        rates = [r.size / r.work for r in runs if r.work > 0]
        rate = median(rates) if rates else None
        phases = (
            startup,
            EstimatePhase(
                "work", work, round(fitted([(r.size, r.work) for r in runs], size, proportional=True), 1),
                f"{size / 2**20:.1f} MiB at the {work} of {len(runs)} earlier {kind} job(s) (by their sizes; median "
                f"{(rate or 0) / 2**20:.1f} MiB/s)",
            ),
            EstimatePhase(
                "swap", "swap", round(fitted([(r.units, r.swap) for r in runs], units, proportional=False), 1),
                f"{units} unit(s) re-pointed in one metastore transaction, as {len(runs)} earlier swap(s) took by "
                "their units",
            ),
        )  # fmt: skip
        seconds = sum(p.seconds for p in phases if p.seconds is not None) if startup.seconds is not None else None
        return DurationEstimate(None if seconds is None else round(seconds, 1), len(runs), rate, engine, phases)
    measured = measured_throughput(kind, done="bytes_done", engine=engine, last=last, program=program)
    if measured is not None:
        return DurationEstimate(round(size / measured.rate, 1), measured.runs, measured.rate, engine)
    if startups:
        missing = f"no basis yet: no finished {kind} job on {engine}"
        phases = (startup, EstimatePhase("work", work, None, missing), EstimatePhase("swap", "swap", None, missing))
        return DurationEstimate(None, 0, None, engine, phases)
    return DurationEstimate(None, 0, None, engine)


# Findings ---------------------------------------------------------------------------------------------------------


def symlink_blockers(listings: Iterable[Iterable[FileEntry]], operation: str) -> list[Finding]:
    """One blocker naming the symbolic links found in ``listings`` (the first :data:`NAMED_LINKS`, the rest counted):
    the job would copy or rewrite what they point at, possibly outside the governed roots."""
    links = {entry.location for listing in listings for entry in listing if entry.symlink}
    if not links:
        return []
    return [
        Finding(
            "symlink_in_data",
            operation,
            f"{len(links)} symbolic link(s) in the data: {named_links(links)}. The console never follows a link (it "
            f"may point outside the governed roots): remove or replace them before {operation}.",
        )
    ]


def refuse_symlinks(listing: Iterable[FileEntry], operation: str) -> None:
    """SYMLINK_REFUSED naming the links of a listing taken when a job is planned (one may appear after the preview)."""
    found = symlink_blockers([listing], operation)
    if found:
        links = sorted(entry.location for entry in listing if entry.symlink)
        raise ApplicationError(ErrorCode.SYMLINK_REFUSED, found[0].message, {"links": links[:NAMED_LINKS]})


def data_work_blockers(
    metastore: Metastore, state: TableState, *, operation: str, rewrite: bool, locations: Iterable[str] = ()
) -> list[Finding]:
    """What refuses data work on the table: transactional tables (their base_/delta_ directories belong to Hive's
    write ids), open transactions or locks on it, a filesystem of the table's location or ``locations`` the engine's
    job cannot reach, and for a rewrite (compact, convert) bucketing it would break."""
    blockers = engine_reach_blockers(metastore, [state.location or "", *locations], operation)
    name = f"{state.ref.database}.{state.ref.table}"
    if state.is_transactional:
        # Hive's AcidUtils (ql/src/java/org/apache/hadoop/hive/ql/io/AcidUtils.java, getAcidState) reads a
        # transactional table only through its base_/delta_ directories and the write ids in the metastore: files
        # written or moved outside Hive are either ignored or read as the wrong snapshot.
        blockers.append(
            Finding(
                "transactional_rewrite",
                operation,
                f"{name} is transactional: {operation} would copy or rewrite its base_/delta_ files outside Hive, "
                f"bypassing its write ids and open transactions. Use Hive's compaction (ALTER TABLE {name} COMPACT "
                "'major') instead.",
            )
        )
    blockers += [
        Finding(f.code, "acid", f"{f.message} {operation.capitalize()} after they end.")
        for f in acid_warnings(metastore, state)
    ]
    blockers += external_data_blockers(metastore, state, operation)
    if rewrite:
        blockers += spark_bucketing_blockers(state, operation)
    bucketed_by = _bucket_columns(metastore, state) if rewrite else []
    if bucketed_by:
        blockers.append(
            Finding(
                "bucketing_rewrite",
                operation,
                f"{name} is bucketed (CLUSTERED BY {', '.join(bucketed_by)}): rewriting its files would break "
                "the one-file-per-bucket layout that bucketed joins and sampling rely on.",
            )
        )
    return blockers


def engine_reach_blockers(metastore: Metastore, locations: Iterable[str], operation: str) -> list[Finding]:
    """One ``engine_unreachable`` blocker per filesystem of ``locations`` a data job could not reach: an object store
    with no credentials for the metastore's job (its profile, or the AWS variables; a region for a machine role),
    HDFS without ``HADOOP_CONF_DIR`` (the cluster's core-site.xml/hdfs-site.xml: name services, HA, Kerberos). The
    job's executors read and write through the same filesystem layer as the console (``operations.spark.programs``)
    with the credentials the worker hands its driver (``object_stores.credentials_environment``)."""
    first: dict[str, str] = {}
    for location in locations:
        scheme = urlsplit(location).scheme
        if scheme and scheme != "file":
            first.setdefault(scheme, location)
    blockers = []
    for scheme, location in sorted(first.items()):
        why = _unreachable_because(metastore, scheme, location)
        if why:
            blockers.append(
                Finding("engine_unreachable", operation, f"The data job cannot reach {scheme}:// ({location}): {why}")
            )
    return blockers


def _unreachable_because(metastore: Metastore, scheme: str, location: str) -> str:
    if scheme in OBJECT_STORE_SCHEMES:
        options = getattr(filesystem_for(location, metastore.name), "options", {})
        if credentials_environment(options) or "region" in options:
            return ""
        where = f"METASTORE_S3_PROFILE_{metastore.name.upper()} or CATALOG_S3_PROFILE"
        named = f"profile {options['profile']!r} has no credentials" if "profile" in options else "no profile"
        return (
            f"no S3 credentials are configured for metastore {metastore.name} ({named}, no AWS_ACCESS_KEY_ID and "
            f"AWS_SECRET_ACCESS_KEY): set {where} to a profile with keys, the AWS variables, or CATALOG_S3_REGION "
            "for a machine role the engine's nodes share."
        )
    if scheme in ("hdfs", "viewfs") and not os.environ.get("HADOOP_CONF_DIR"):
        return (
            "HADOOP_CONF_DIR is not set, so neither the console nor the job's executors find the cluster's "
            "core-site.xml and hdfs-site.xml (name services, HA, Kerberos): set it where the console and its "
            "workers run."
        )
    return ""


def external_data_blockers(metastore: Metastore, state: TableState, operation: str) -> list[Finding]:
    """An EXTERNAL table's files are not the console's: data work on them only where the metastore's configuration
    says its external data is governed (``METASTORE_GOVERNS_EXTERNAL_DATA_<NAME>``)."""
    if not state.is_external or metastore.config.governs_external_data:
        return []
    return [
        Finding(
            "external_data",
            operation,
            f"{state.ref.database}.{state.ref.table} is an EXTERNAL table: its files belong to whoever wrote them, "
            f"and metastore {metastore.name} is not configured to govern external data "
            f"(METASTORE_GOVERNS_EXTERNAL_DATA_{metastore.name.upper()}), so the console does not {operation} them.",
        )
    ]


def _bucket_columns(metastore: Metastore, state: TableState) -> list[str]:
    if state.sd_id is None:
        return []
    rows = BucketingColumn.objects.using(metastore.alias).filter(sd_id=state.sd_id).order_by("position")
    return [name or "" for name in rows.values_list("name", flat=True)]


def data_work_warnings(state: TableState, operation: str) -> list[Finding]:
    """Engines that cache locations or files, and readers downstream, see the change only once refreshed."""
    ref = state.ref
    return [
        Finding(
            "engines_cache_locations",
            operation,
            f"Engines that cache locations read the old data until refreshed: run INVALIDATE METADATA "
            f"{ref.database}.{ref.table} on Impala and REFRESH TABLE {ref.database}.{ref.table} on long-running "
            "Spark sessions after the swap.",
            "warning",
        ),
        Finding(
            "downstream_readers",
            operation,
            "Readers holding the old paths (running queries, external tables or jobs that name the directories) "
            "keep reading the old files: check them before the source is removed.",
            "warning",
        ),
    ]
