"""The findings frame: a seed's findings, computed from one run's published values.

A finding in ``<suite>.reproduction.json`` is ``product(numerator) / product(denominator)``, where
each term names a published ``workload``/``metric`` (``variant`` defaults to ``default``) and
optionally a ``statistic`` of its samples (``min``, ``max``, ``median``; default the published
value): ``min`` suits timings on a shared machine, where noise only ever slows a repetition down. The
frame has one row per finding per engine of the run, with the band and the seed figure beside the
observed value, so GX validates it and the report draws it without knowing the suite. A finding one of whose
inputs is recorded ``not_applicable`` on an engine (a capability that build lacks) is itself not
applicable there (``applicable == "no"``): reported, not judged.
"""

from __future__ import annotations

import json
import math
import statistics
from typing import Any

import pandas as pd

FINDINGS_COLUMNS = [
    "suite", "finding", "description", "engine_id", "engine_version", "engine_build",
    "observed", "band_min", "band_max", "seed_value", "unit", "inputs", "problem", "applicable",
]


STATISTICS = ("value", "min", "max", "median")


def _term_value(values: dict[tuple[str, str, str], tuple[float | None, str]], term: dict[str, Any]) -> tuple[float | None, str]:
    key = (term["workload"], term.get("variant", "default"), term["metric"])
    if key not in values:
        return None, f"{'/'.join(key)} not published"
    value, status = values[key]
    stat = term.get("statistic", "value")
    if stat not in STATISTICS:
        raise ValueError(f"finding term {term!r}: statistic must be one of {STATISTICS}")
    if stat != "value":
        samples = (values.get(key + ("samples",)) or (None, ""))[0]  # type: ignore[operator]
        if samples:
            value = {"min": min, "max": max, "median": statistics.median}[stat](samples)
    if status != "ok" or value is None or not math.isfinite(value):
        return None, f"{'/'.join(key)} is {status if status != 'ok' else 'not a finite number'}"
    return value, ""


def not_applicable_input(values: dict[tuple[str, str, str], tuple[float | None, str]], finding: dict[str, Any]) -> str | None:
    """The first input of ``finding`` recorded as not applicable on this engine, if any (then so is the finding)."""
    for term in (finding.get("numerator") or []) + (finding.get("denominator") or []):
        key = (term["workload"], term.get("variant", "default"), term["metric"])
        if key in values and values[key][1] == "not_applicable":
            return "/".join(key)
    return None


def finding_value(values: dict[tuple[str, str, str], tuple[float | None, str]], finding: dict[str, Any]) -> tuple[float | None, str, dict[str, float | None]]:
    """``(observed, problem, inputs)`` of one finding; observed is None (with the problem) when not computable."""
    inputs: dict[str, float | None] = {}
    problems: list[str] = []
    parts: dict[str, float] = {"numerator": 1.0, "denominator": 1.0}
    for side in ("numerator", "denominator"):
        for term in finding.get(side) or []:
            value, problem = _term_value(values, term)
            inputs[f"{term['workload']}/{term.get('variant', 'default')}/{term['metric']}"] = value
            if value is None:
                problems.append(problem)
            else:
                parts[side] *= value
    if problems:
        return None, "; ".join(problems), inputs
    if finding.get("denominator") and parts["denominator"] == 0:
        return None, "denominator is zero", inputs
    return parts["numerator"] / parts["denominator"], "", inputs


def findings_frame(measurements: pd.DataFrame, suite: str, definition: dict[str, Any]) -> pd.DataFrame:
    """One row per finding per engine of ``suite`` in ``measurements`` (one run's published rows)."""
    rows: list[dict[str, Any]] = []
    sdf = measurements[measurements["suite"] == suite]
    for engine_id, edf in sdf.groupby("engine_id", sort=True):
        values: dict[tuple[str, ...], tuple[Any, str]] = {}
        for r in edf.itertuples():
            values[(r.workload, r.variant, r.metric)] = (None if pd.isna(r.value) else float(r.value), r.status)
            samples = getattr(r, "samples", None)
            if samples is not None and len(samples):
                values[(r.workload, r.variant, r.metric, "samples")] = ([float(x) for x in samples if x is not None and math.isfinite(x)], r.status)
        first = edf.iloc[0]
        for f in definition.get("findings", []):
            observed, problem, inputs = finding_value(values, f)
            na = not_applicable_input(values, f)
            band = f.get("band", {})
            rows.append(
                {
                    "suite": suite,
                    "finding": f["id"],
                    "description": f.get("description", ""),
                    "engine_id": str(engine_id),
                    "engine_version": first.get("engine_version"),
                    "engine_build": first.get("engine_build"),
                    "observed": observed,
                    "band_min": band.get("min"),
                    "band_max": band.get("max"),
                    "seed_value": (f.get("seed") or {}).get("value"),
                    "unit": f.get("unit", ""),
                    "inputs": json.dumps(inputs, sort_keys=True),
                    "problem": (f"not applicable on this engine: {na} is recorded as not applicable" if na else problem) or None,
                    "applicable": "no" if na else "yes",
                }
            )
    frame = pd.DataFrame(rows, columns=FINDINGS_COLUMNS)
    for col in ("observed", "band_min", "band_max", "seed_value"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    return frame


def finding_expectations(definition: dict[str, Any]) -> list[dict[str, Any]]:
    """Expectation entries (library format) for the findings frame of one reproduction file.

    Per finding: observed within its band, restricted to that finding's rows; plus one frame-wide
    "observed is not null" (a finding that cannot be computed fails), then any raw expectations the
    file lists under ``expectations``.
    """
    entries: list[dict[str, Any]] = [
        {
            "type": "expect_column_values_to_not_be_null",
            "kwargs": {"column": "observed"},
            "where": {"applicable": "yes"},
            "meta": {"notes": "every finding is computable: its inputs are published, measured and non-zero where divided by (a finding with an input recorded as not applicable on an engine is not applicable there)",
                     "generated": True},
        }
    ]
    for f in definition.get("findings", []):
        band = f.get("band", {})
        kwargs: dict[str, Any] = {"column": "observed"}
        if band.get("min") is not None:
            kwargs["min_value"] = band["min"]
        if band.get("max") is not None:
            kwargs["max_value"] = band["max"]
        entries.append(
            {
                "type": "expect_column_values_to_be_between",
                "kwargs": kwargs,
                "where": {"finding": f["id"], "applicable": "yes"},
                "meta": {
                    "finding": f["id"],
                    "notes": f.get("description", ""),
                    "seed": f.get("seed"),
                    "band_reason": f.get("band_reason"),
                    "generated": True,
                },
            }
        )
    entries.extend(definition.get("expectations") or [])
    return entries
