"""The one tidy schema every suite publishes into, and the dataset's partition layout.

A row is one metric of one workload variant in one cell of one run, with everything needed to
reproduce it. Partition keys live in the folder names only (hive style,
``hardware_label=<label>/run_date=<YYYY-MM-DD>/run_key=<key>/part-0.parquet``), so
``pyarrow.dataset``, ``pandas.read_parquet`` and DuckDB's ``read_parquet(..., hive_partitioning=true)``
read the whole dataset as is.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa

PARTITION_KEYS = ("hardware_label", "run_date", "run_key")

_TS = pa.timestamp("us", tz="UTC")

#: Columns stored inside each measurement file (partition keys are added by readers from the path).
MEASUREMENT_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("logical_date", _TS),
        ("host_name", pa.string()),
        ("host_cpu_model", pa.string()),
        ("host_cores", pa.int32()),
        ("host_memory_bytes", pa.int64()),
        ("host_kernel", pa.string()),
        ("host_boot_id", pa.string()),
        ("host_machine_id", pa.string()),
        ("host_cpu_quota", pa.float64()),
        ("engine", pa.string()),
        ("engine_id", pa.string()),
        ("engine_version", pa.string()),
        ("engine_build", pa.string()),
        ("engine_backend", pa.string()),
        ("engine_configure", pa.string()),
        ("data_checksums", pa.bool_()),
        ("engine_facts", pa.string()),
        ("suite", pa.string()),
        ("workload", pa.string()),
        ("variant", pa.string()),
        ("metric", pa.string()),
        ("unit", pa.string()),
        ("value", pa.float64()),
        ("spread", pa.float64()),
        ("repetitions", pa.int32()),
        ("samples", pa.list_(pa.float64())),
        ("aggregate", pa.string()),
        ("status", pa.string()),
        ("reason", pa.string()),
        ("scale", pa.string()),
        ("scale_params", pa.string()),
        ("settings", pa.string()),
        ("git_revision", pa.string()),
        ("started_at", _TS),
        ("ended_at", _TS),
        ("extra", pa.string()),
        # What else used the machine during the task's measure windows (the worst window), and
        # whether every window stayed under the run's quiet_window thresholds (null: not measured).
        ("host_other_cpu", pa.float64()),
        ("host_steal", pa.float64()),
        ("host_load_1m", pa.float64()),
        ("quiet", pa.bool_()),
        # How the metric is made, as its suite declares it: deterministic | sampled | timed
        # (jsonbench.dataset.measurement.MetricKind). Null in files written before it existed: readers
        # then ask the suite (jsonbench.suites.base.Suite.metric_kind).
        ("metric_kind", pa.string()),
    ]
)

#: Great Expectations outcomes, one row per expectation per run (stored beside the measurements).
VALIDATION_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("logical_date", _TS),
        ("check_kind", pa.string()),  # sanity | reproduction | drift
        ("suite", pa.string()),
        ("engine_id", pa.string()),
        ("expectation", pa.string()),
        ("description", pa.string()),
        ("observed", pa.float64()),
        ("min_value", pa.float64()),
        ("max_value", pa.float64()),
        ("success", pa.bool_()),
        ("details", pa.string()),
        ("validated_at", _TS),
        # Added by the checks module (additive): what a row is about, and its verdict in words.
        ("verdict", pa.string()),  # pass | fail | not_applicable | ok | drift | unstable | insufficient_history
        ("engine_version", pa.string()),
        ("engine_build", pa.string()),
        ("workload", pa.string()),
        ("variant", pa.string()),
        ("metric", pa.string()),
        ("unit", pa.string()),
        ("scale", pa.string()),
        ("gx_suite", pa.string()),
    ]
)

#: The table of comparisons (``jsonbench compare``): one row per metric of a comparison, with its arms, builds, pairs,
#: estimate, interval and verdict. The nightly checks read it for the noise a compared build inherits.
COMPARISONS = "comparisons"
COMPARISON_SCHEMA = pa.schema(
    [
        ("comparison_id", pa.string()),
        ("logical_date", _TS),
        ("arm_a", pa.string()),  # the arm as JSON: engine and settings
        ("arm_b", pa.string()),
        ("engine_a", pa.string()),
        ("engine_b", pa.string()),
        ("build_a", pa.string()),  # the engine builds the arms' starts reported (more than one: all of them)
        ("build_b", pa.string()),
        ("settings_a", pa.string()),  # the settings in force in the arm's first start (matrix, suite, arm; capped)
        ("settings_b", pa.string()),
        ("same_arm", pa.bool_()),  # an A/A comparison: its intervals are the host's floor
        ("host_name", pa.string()),
        ("host_machine_id", pa.string()),
        ("host_boot_id", pa.string()),
        ("host_cpu_model", pa.string()),
        ("scale", pa.string()),
        ("seed", pa.int64()),
        ("stages", pa.string()),  # the planned totals, e.g. [10, 20, 40]
        ("pairs_planned", pa.int32()),  # pairs of the stages that ran
        ("pairs_used", pa.int32()),
        ("pairs_dropped", pa.int32()),
        ("dropped", pa.string()),  # JSON: pair index -> why
        ("a_first", pa.int32()),  # usable pairs whose first start was arm A's
        ("suite", pa.string()),
        ("workload", pa.string()),
        ("variant", pa.string()),
        ("metric", pa.string()),
        ("unit", pa.string()),
        ("metric_kind", pa.string()),
        ("estimate", pa.float64()),  # B/A, Hodges-Lehmann
        ("interval_low", pa.float64()),
        ("interval_high", pa.float64()),
        ("level", pa.float64()),
        ("p_value", pa.float64()),
        ("adjusted_p", pa.float64()),
        ("order_p", pa.float64()),
        ("margin", pa.float64()),
        ("margin_source", pa.string()),  # run | aa:<comparison id> | default
        ("higher_is_better", pa.bool_()),
        ("verdict", pa.string()),
        ("pairs_needed", pa.int32()),
        ("decided_at", pa.int32()),  # pairs in total at the look that decided it
        ("fact_a", pa.string()),
        ("fact_b", pa.string()),
        ("fact", pa.string()),
        ("published_at", _TS),
    ]
)


@dataclass(frozen=True, kw_only=True)
class ValidationRow:
    """One row of :data:`VALIDATION_SCHEMA`, as the checks build it: its fields are the schema's columns, in order.

    Every kind of check (sanity, reproduction, drift, a damaged file, a missing detector) builds
    this one value, so no row can lack a column another kind has (a test holds the fields equal to
    ``VALIDATION_SCHEMA.names``). ``details`` is a dict here and JSON text in the file;
    ``validated_at`` is stamped when the check is done.
    """

    run_id: str
    logical_date: datetime | None
    check_kind: str
    suite: str | None = None
    engine_id: str | None = None
    expectation: str
    description: str = ""
    observed: float | None = None
    min_value: float | None = None
    max_value: float | None = None
    success: bool
    details: dict[str, Any] = field(default_factory=dict)
    validated_at: datetime | None = None
    verdict: str
    engine_version: str | None = None
    engine_build: str | None = None
    workload: str | None = None
    variant: str | None = None
    metric: str | None = None
    unit: str | None = None
    scale: str | None = None
    gx_suite: str | None = None

    def to_row(self) -> dict[str, Any]:
        """The row as :func:`jsonbench.dataset.publish.publish_validations` stores it (details as JSON text)."""
        row = asdict(self)
        row["details"] = json.dumps(self.details, default=str)
        return row


def partition_schema() -> pa.Schema:
    """The hive partition columns as every reader must type them (``run_date`` is a date, not a string)."""
    return pa.schema([("hardware_label", pa.string()), ("run_date", pa.date32()), ("run_key", pa.string())])


_KEY_RE = re.compile(r"[^A-Za-z0-9_.-]+")


def run_key(run_id: str) -> str:
    """A folder-safe form of an Airflow run id (``manual__2026-11-29T21:31:14+00:00`` and the like)."""
    key = _KEY_RE.sub("_", run_id).strip("._")
    if not key:
        raise ValueError(f"run id {run_id!r} has no usable characters")
    return key
