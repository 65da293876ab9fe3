"""The findings frame: a seed's findings, computed from one run's published values, judged per scale.

A finding in ``<suite>.reproduction.json`` is ``product(numerator) / product(denominator)``, where
each term names a published ``workload``/``metric`` (``variant`` defaults to ``default``) and
optionally a ``statistic`` of its samples (``min``, ``max``, ``median``; default the published
value): ``min`` suits timings on a shared machine, where noise only ever slows a repetition down.
``"geomean": true`` takes the n-th root of the quotient (n = numerator terms), so a finding over
many paired terms reads as a typical factor.

Scope. A finding is computed per engine of the run (``"scope": "engine"``, the default) or, with
``"scope": "cross_engine"``, once per run across engines: each term then names its ``engine``
(an engine id such as ``postgres-18``), and the row's ``engine_id`` is ``"<numerator engine>/<denominator
engine>"``. A cross-engine finding whose engines are not both in the run is not applicable.

Kind. ``"kind": "deterministic"`` marks a fact of the data and the engine (counts, sizes, plan
shapes): checked exactly or within 1-2 %. ``"kind": "timing"`` marks a comparison of measured
speeds, whose band must only exclude the opposite conclusion. The kind is stored with each
validation row (``details.finding_kind``), so a test can tell a missed timing band from a broken fact.

Bands are per scale (``smoke``, ``laptop``, ``full``): ``"bands": {"laptop": {"min": .., "max": ..,
"reason": .., "derived_from": [run ids]}}``; a band derived from no run says so, ``"derived_from": [],
"not_derived": "why"``, and the validation row carries both, so a summary can tell a measured band
from a guess; a scale may instead say ``{"not_applicable": "why"}`` (the finding's mechanism differs
at that scale). A finding without an entry for the run's scale falls back to ``"band"`` (all
scales); with neither, it is not applicable at that scale, and says so.

A tie fails. The bound on the side of a timing finding's ``opposite`` is strict: with
``"opposite": {"below": 1.0}`` and ``min`` 1.0, an observed 1.0 (no difference) fails, because a
tie is not the seed's conclusion either. The expectation files' rules (bands exclude the opposite,
the opposite agrees with the seed's direction, ...) live in one validator,
:func:`jsonbench.checks.validate.validate_library`.

Disturbed windows. A timing finding one of whose inputs was measured while the host was busy (its
``quiet`` column is false, contract 3) is reported with the verdict ``disturbed`` and not judged: a
busy hour proves nothing either way. Deterministic findings are judged whatever the load, and so is a
measured finding that does not depend on the host's speed (``depends_on`` without ``host_speed``: the
WAL of a fixed count of updates), which a busy host cannot move.

Host requirements. A finding whose mechanism needs something of the machine lists it under
``requires`` beside its capabilities: ``{"fact": "host_cores", "min": 3, "why": "..."}`` (``fact``
names a host column of the measurement rows, :data:`HOST_FACTS`; ``min`` and/or ``max``; ``why``
says what of the mechanism needs it). On a host whose recorded facts miss it the finding is
``not_applicable`` with a reason naming the fact, its value and the need: two parallel workers
and their leader on two cores measure scheduling, not parallelism, and a band calibrated on the
seed's eight vCPUs would alarm every night there. The same finding is judged again on a host that
has it. The facts are read from the rows themselves (each row records the host that measured it),
never from the machine that runs the check.

Applicability. A finding one of whose inputs is recorded ``not_applicable`` on an engine (a
capability that build lacks) is not applicable there; so is a finding whose input the suite does
not promise at all (``expected_metrics()``: a metric another change will add). A promised input
that is missing fails the finding (and the completeness check).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from jsonbench.dataset.read import row_tuples
from jsonbench.matrix import load_matrix

if TYPE_CHECKING:
    from jsonbench.checks.library import Library

FINDINGS_COLUMNS = [
    "suite",
    "finding",
    "description",
    "engine_id",
    "engine_version",
    "engine_build",
    "observed",
    "band_min",
    "band_max",
    "seed_value",
    "unit",
    "inputs",
    "problem",
    "applicable",
    "finding_kind",
    "scope",
    "band_reason",
    "derived_from",
    "not_derived",
    "disturbed",
]

STATISTICS = ("value", "min", "max", "median")
SCALES = tuple(load_matrix().scales)  # the matrix file's scales, in its order
KINDS = ("timing", "deterministic")
#: Host columns of the measurement rows a finding may require (contract C2): ``requires: [{"fact": ..., "min"|"max": n, "why": ...}]``.
HOST_FACTS = ("host_cores", "host_memory_bytes")

Values = dict[tuple[str, ...], tuple[Any, str]]
_STATISTIC_OF: dict[str, Callable[[list[float]], float]] = {"min": min, "max": max, "median": statistics.median}


@dataclass(frozen=True)
class ScaleBand:
    """The band a finding is judged with at one scale, or why it is not applied there.

    ``derived_from`` names the runs the band was derived from; empty with ``not_derived`` saying why
    when it was not derived from any run (a scale nobody has recorded yet).
    """

    min: float | None
    max: float | None
    reason: str
    not_applicable: str | None = None
    derived_from: tuple[str, ...] = ()
    not_derived: str | None = None
    strict_min: bool = False
    strict_max: bool = False

    def holds(self, value: float) -> bool:
        """Whether ``value`` lies in the band as GX judges it (a strict end, the opposite's edge, excludes a tie)."""
        if self.min is not None and (value < self.min or (self.strict_min and value == self.min)):
            return False
        return not (self.max is not None and (value > self.max or (self.strict_max and value == self.max)))


def _band(finding: dict[str, Any], spec: dict[str, Any], reason: str) -> ScaleBand:
    opposite = finding.get("opposite") or {}
    timing = finding.get("kind", "timing") == "timing"
    return ScaleBand(
        spec.get("min"),
        spec.get("max"),
        reason,
        derived_from=tuple(str(r) for r in spec.get("derived_from") or ()),
        not_derived=str(spec["not_derived"]) if spec.get("not_derived") else None,
        strict_min=timing and opposite.get("below") is not None,
        strict_max=timing and opposite.get("above") is not None,
    )


def band_at(finding: dict[str, Any], scale: str | None) -> ScaleBand:
    """The finding's band at ``scale`` (its ``bands[scale]``, else its all-scale ``band``)."""
    bands = finding.get("bands") or {}
    spec = bands.get(scale) if scale else None
    if spec is None:
        spec = finding.get("band")
        if spec is None:
            return ScaleBand(None, None, "", f"no band for scale {scale!r} (bands given for {', '.join(sorted(bands)) or 'no scale'})")
        return _band(finding, spec, str(finding.get("band_reason", "")))
    gate = spec.get("gate", spec.get("not_applicable"))
    if gate is not None:  # a gate (the band rule's word for a timing finding) or a fact not applied at this scale
        return ScaleBand(None, None, str(gate), f"not applied at scale {scale}: {gate}")
    return _band(finding, spec, str(spec.get("reason") or finding.get("band_reason", "")))


def term_key(term: dict[str, Any]) -> tuple[str, str, str]:
    return (term["workload"], term.get("variant", "default"), term["metric"])


def _term_label(term: dict[str, Any]) -> str:
    label = "/".join(term_key(term))
    if term.get("engine"):
        label = f"{term['engine']}:{label}"
    if term.get("statistic", "value") != "value":
        label += f"[{term['statistic']}]"
    return label


def _term_value(values: Values, term: dict[str, Any]) -> tuple[float | None, str]:
    key = term_key(term)
    if key not in values:
        return None, f"{'/'.join(key)} not published"
    value, status = values[key]
    stat = term.get("statistic", "value")
    if stat not in STATISTICS:
        raise ValueError(f"finding term {term!r}: statistic must be one of {STATISTICS}")
    if stat != "value":
        samples = (values.get(key + ("samples",)) or (None, ""))[0]
        if samples:
            value = _STATISTIC_OF[stat](samples)
    if status != "ok" or value is None or not math.isfinite(value):
        return None, f"{'/'.join(key)} is {status if status != 'ok' else 'not a finite number'}"
    return float(value), ""


def terms(finding: dict[str, Any]) -> list[dict[str, Any]]:
    return list(finding.get("numerator") or []) + list(finding.get("denominator") or [])


def _term_values(values: Values | dict[str, Values], term: dict[str, Any]) -> Values | None:
    """The values ``term`` reads: its engine's (None when not in the run) if it names one, else ``values`` itself."""
    if term.get("engine"):
        return cast("dict[str, Values]", values).get(term["engine"])
    return cast(Values, values)


def host_requirements(finding: dict[str, Any]) -> list[dict[str, Any]]:
    """The host requirements a finding declares under ``requires`` (objects naming a ``fact``)."""
    return [r for r in finding.get("requires") or [] if isinstance(r, dict)]


def unmet_host_requirement(finding: dict[str, Any], host: dict[str, Any]) -> str | None:
    """Why the recorded ``host`` facts cannot show ``finding`` (fact, value and need), or None when they can.

    A fact the rows do not record (an old file's null) is not held against the finding: it is judged
    as any other, since nothing says the host lacks what it needs.
    """
    for req in host_requirements(finding):
        fact = str(req.get("fact"))
        value = host.get(fact)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        lo, hi = req.get("min"), req.get("max")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            need = " and ".join(p for p in (f">= {lo:g}" if lo is not None else "", f"<= {hi:g}" if hi is not None else "") if p)
            return f"not applicable on this host: {fact} = {value:g}, the finding needs {fact} {need} ({req.get('why', '')})"
    return None


def _host_of(first: pd.Series) -> dict[str, Any]:
    """The host facts recorded with one engine's rows (:data:`HOST_FACTS`), None where not recorded."""
    out: dict[str, Any] = {}
    for fact in HOST_FACTS:
        value = first.get(fact)
        out[fact] = None if value is None or pd.isna(value) else float(value)
    return out


def not_applicable_input(values: Values | dict[str, Values], finding: dict[str, Any]) -> str | None:
    """The first input of ``finding`` recorded as not applicable (on its engine), if any."""
    for term in terms(finding):
        vals = _term_values(values, term) or {}
        key = term_key(term)
        if key in vals and vals[key][1] == "not_applicable":
            return _term_label(term)
    return None


def unjustified_not_applicable(
    values: Values | dict[str, Values], finding: dict[str, Any], reasons: dict[tuple[str, str, str], str]
) -> str | None:
    """Why an input's ``not_applicable`` does not excuse ``finding``, or None when it does.

    A finding steps aside only for what it declares in ``requires`` (capabilities such as
    ``lz4`` or ``json_table``), and only when the input's recorded reason names one of them:
    a suite that marks an input not applicable by mistake must not silence the finding.
    """
    na = not_applicable_input(values, finding)
    if na is None:
        return None
    needs = [r.lower() for r in finding.get("requires") or [] if isinstance(r, str)]  # capabilities; host facts are dicts
    for term in terms(finding):
        key = term_key(term)
        reason = reasons.get(key, "") or ""
        vals = _term_values(values, term) or {}
        if key in vals and vals[key][1] == "not_applicable":
            if not needs:
                return f"{_term_label(term)} is recorded not applicable ({reason or 'no reason'}), but this finding depends on no optional capability"
            if not any(n in reason.lower() for n in needs):
                return (
                    f"{_term_label(term)} is recorded not applicable ({reason or 'no reason'}), which names none of this "
                    f"finding's requirements ({', '.join(needs)})"
                )
    return None


def finding_value(values: Values | dict[str, Values], finding: dict[str, Any]) -> tuple[float | None, str, dict[str, float | None]]:
    """``(observed, problem, inputs)`` of one finding; observed is None (with the problem) when not computable.

    ``values`` maps ``(workload, variant, metric)`` to ``(value, status)`` for a per-engine finding,
    or engine id to such a map for a cross-engine one.
    """
    inputs: dict[str, float | None] = {}
    problems: list[str] = []
    parts: dict[str, float] = {"numerator": 1.0, "denominator": 1.0}
    for side in ("numerator", "denominator"):
        for term in finding.get(side) or []:
            vals = _term_values(values, term)
            if vals is None:
                inputs[_term_label(term)] = None
                problems.append(f"engine {term['engine']} not in this run")
                continue
            value, problem = _term_value(vals, term)
            inputs[_term_label(term)] = value
            if value is None:
                problems.append(problem)
            else:
                parts[side] *= value
    if problems:
        return None, "; ".join(problems), inputs
    if finding.get("denominator") and parts["denominator"] == 0:
        return None, "denominator is zero", inputs
    observed = parts["numerator"] / parts["denominator"]
    if finding.get("geomean"):
        n = max(len(finding.get("numerator") or []), 1)
        if observed < 0:
            return None, "geometric mean of a negative quotient", inputs
        observed = observed ** (1.0 / n)
    return observed, "", inputs


def _reasons_of(edf: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    if "reason" not in edf.columns:
        return {}
    return {
        (r.workload, r.variant, r.metric): r.reason
        for r in row_tuples(edf, ("workload", "variant", "metric", "reason"))
        if isinstance(r.reason, str)
    }


#: What :func:`_values_of` reads of a row (:func:`jsonbench.dataset.read.row_tuples`: the records and rechecks iterate
#: every run's rows, and every other column is an Arrow-backed string).
_VALUE_COLUMNS = ("workload", "variant", "metric", "value", "status", "samples", "quiet", "host_other_cpu")


def _values_of(edf: pd.DataFrame) -> Values:
    values: Values = {}
    for r in row_tuples(edf, _VALUE_COLUMNS):
        values[(r.workload, r.variant, r.metric)] = (None if pd.isna(r.value) else float(r.value), r.status)
        samples = getattr(r, "samples", None)
        if samples is not None and len(samples):
            values[(r.workload, r.variant, r.metric, "samples")] = (
                [float(x) for x in samples if x is not None and math.isfinite(x)],
                r.status,
            )
        quiet = getattr(r, "quiet", None)
        if quiet is not None and quiet is not pd.NA and not (isinstance(quiet, float) and math.isnan(quiet)):
            values[(r.workload, r.variant, r.metric, "quiet")] = (bool(quiet), str(getattr(r, "host_other_cpu", "")))
    return values


def load_sensitive(finding: dict[str, Any]) -> bool:
    """Whether a busy host can move the finding: a timing finding that depends on the host's speed."""
    return finding.get("kind", "timing") == "timing" and "host_speed" in finding.get("depends_on", ["host_speed"])


def disturbed_inputs(values: Values | dict[str, Values], finding: dict[str, Any]) -> list[str]:
    """The finding's inputs measured while the host was busy (their ``quiet`` column is false)."""
    out = []
    for term in terms(finding):
        vals = _term_values(values, term) or {}
        q = vals.get(term_key(term) + ("quiet",))
        if q is not None and q[0] is False:
            out.append(f"{_term_label(term)} (host_other_cpu {q[1]})")
    return out


def _unpromised(finding: dict[str, Any], promised: set[tuple[str, str]] | None) -> str | None:
    """The first input whose (workload, metric) the suite does not promise at all, if any."""
    if promised is None:
        return None
    for term in terms(finding):
        if (term["workload"], term["metric"]) not in promised:
            return "/".join(term_key(term))
    return None


def _row(
    suite: str,
    f: dict[str, Any],
    engine_id: str,
    version: Any,
    build: Any,
    scale: str | None,
    values: Values | dict[str, Values],
    promised: set[tuple[str, str]] | None,
    missing_engine: str | None = None,
    reasons: dict[tuple[str, str, str], str] | None = None,
    host: dict[str, Any] | None = None,
) -> dict[str, Any]:
    band = band_at(f, scale)
    unmet = unmet_host_requirement(f, host or {})
    observed, problem, inputs = finding_value(values, f)
    na = None
    if not band.not_applicable and not unmet and not missing_engine and f.get("scope", "engine") == "engine":
        unjustified = unjustified_not_applicable(values, f, reasons or {})
        if unjustified:
            problem = unjustified
    if band.not_applicable:
        na = band.not_applicable
    elif unmet:
        na = unmet
    elif missing_engine:
        na = f"not applicable in this run: {missing_engine}"
    else:
        unpromised = _unpromised(f, promised)
        if unpromised:
            na = f"not applicable: the {suite} suite does not measure {unpromised} (yet)"
        else:
            na_input = not_applicable_input(values, f)
            if na_input and not (problem and "recorded not applicable" in problem):
                na = f"not applicable on this engine: {na_input} is recorded as not applicable"
    disturbed = disturbed_inputs(values, f) if load_sensitive(f) and not na else []
    if disturbed and not problem:
        problem = "measured while the host was busy, not judged: " + "; ".join(disturbed)
    return {
        "suite": suite,
        "finding": f["id"],
        "description": f.get("description", ""),
        "engine_id": engine_id,
        "engine_version": version,
        "engine_build": build,
        "observed": observed,
        "band_min": None if na else band.min,
        "band_max": None if na else band.max,
        "seed_value": (f.get("seed") or {}).get("value"),
        "unit": f.get("unit", ""),
        "inputs": json.dumps(inputs, sort_keys=True),
        "problem": na or problem or None,
        "applicable": "no" if na else "yes",
        "finding_kind": f.get("kind", "timing"),
        "scope": f.get("scope", "engine"),
        "band_reason": band.reason,
        "derived_from": json.dumps(list(band.derived_from)),
        "not_derived": None if na else band.not_derived,
        "disturbed": "yes" if disturbed else "no",
    }


def _cross_engine_row(
    suite: str,
    f: dict[str, Any],
    scale: str | None,
    by_engine: dict[str, Values],
    firsts: dict[str, pd.Series],
    promised_set: set[tuple[str, str]] | None,
) -> dict[str, Any]:
    """The row of a finding comparing two engines (``numerator/denominator``), naming the engines this run lacks."""
    engines = [t["engine"] for t in terms(f)]
    num = (f.get("numerator") or [{}])[0].get("engine", "?")
    den = (f.get("denominator") or [{}])[0].get("engine", "?")
    missing = [e for e in dict.fromkeys(engines) if e not in by_engine]
    versions = "/".join(str(firsts[e].get("engine_version")) if e in firsts else "-" for e in (num, den))
    builds = "/".join(str(firsts[e].get("engine_build")) if e in firsts else "-" for e in (num, den))
    return _row(
        suite,
        f,
        f"{num}/{den}",
        versions,
        builds,
        scale,
        by_engine,
        promised_set,
        missing_engine=f"engine(s) {', '.join(missing)} not in this run" if missing else None,
        host=_host_of(next(iter(firsts.values()))) if firsts else None,
    )


def promised_metrics(suite: str) -> set[tuple[str, str]] | None:
    """The (workload, metric) pairs the suite promises (at every scale alike), or None if the suite is unknown."""
    try:
        from jsonbench.suites import get_suite

        return set(get_suite(suite).expected_metrics())
    except Exception:  # an unknown suite (a test's) promises nothing we can read: judge what is there
        return None


def findings_per_run(df: pd.DataFrame, lib: Library, suites: list[str] | None, scale: str) -> list[pd.DataFrame]:
    """The findings frame of each run and suite asked for (with the run's id and logical date), as the check computes it.

    ``lib`` is the parsed expectation files (:class:`jsonbench.checks.library.Library`). Here, below the check and
    the tools, because the calibration command (:mod:`jsonbench_dev.calibrate`) and the nightly noise model
    (:mod:`jsonbench.history.noise`, read by drift) both need it.
    """
    frames = []
    for run_id, rdf in df.groupby("run_id", sort=False):
        for suite in sorted(rdf["suite"].unique()):
            if suite not in lib.reproduction or (suites and suite not in suites):
                continue
            f = findings_frame(rdf, suite, lib.reproduction[suite], scale=scale, promised=promised_metrics(suite))
            f["run_id"] = run_id
            f["logical_date"] = rdf["logical_date"].iloc[0]
            frames.append(f)
    return frames


def findings_frame(
    measurements: pd.DataFrame,
    suite: str,
    definition: dict[str, Any],
    *,
    scale: str,
    promised: Iterable[tuple[str, str]] | None = None,
) -> pd.DataFrame:
    """One row per finding per engine of ``suite`` in ``measurements`` (one run's published rows).

    ``scale`` picks the bands: the run's (its plan's :class:`~jsonbench.cell.RunRef`, or the scale a
    caller reads runs of), never guessed from the rows; ``promised`` is the suite's
    ``expected_metrics()`` (``(workload, metric)`` pairs), used to tell a metric the suite does not
    measure yet from one it lost.
    """
    rows: list[dict[str, Any]] = []
    sdf = measurements[measurements["suite"] == suite]
    if sdf.empty:
        return pd.DataFrame([], columns=FINDINGS_COLUMNS)
    promised_set = set(promised) if promised is not None else None
    per_engine = [f for f in definition.get("findings", []) if f.get("scope", "engine") == "engine"]
    cross = [f for f in definition.get("findings", []) if f.get("scope") == "cross_engine"]
    by_engine: dict[str, Values] = {}
    reasons: dict[str, dict[tuple[str, str, str], str]] = {}
    firsts: dict[str, pd.Series] = {}
    for engine_id, edf in sdf.groupby("engine_id", sort=True):
        by_engine[str(engine_id)] = _values_of(edf)
        reasons[str(engine_id)] = _reasons_of(edf)
        firsts[str(engine_id)] = edf.iloc[0]
    for engine_id, values in by_engine.items():
        first = firsts[engine_id]
        for f in per_engine:
            rows.append(
                _row(
                    suite,
                    f,
                    engine_id,
                    first.get("engine_version"),
                    first.get("engine_build"),
                    scale,
                    values,
                    promised_set,
                    reasons=reasons[engine_id],
                    host=_host_of(first),
                )
            )
    rows += [_cross_engine_row(suite, f, scale, by_engine, firsts, promised_set) for f in cross]
    frame = pd.DataFrame(rows, columns=FINDINGS_COLUMNS)
    for col in ("observed", "band_min", "band_max", "seed_value"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    return frame


def finding_expectations(definition: dict[str, Any], scale: str | None = None) -> list[dict[str, Any]]:
    """Expectation entries (library format) for the findings frame of one reproduction file at ``scale``.

    Per finding applied at this scale: observed within its band, restricted to that finding's
    applicable rows; plus one frame-wide "observed is not null" (a finding that cannot be computed
    fails), then any raw expectations the file lists under ``expectations``.
    """
    entries: list[dict[str, Any]] = [
        {
            "type": "expect_column_values_to_not_be_null",
            "kwargs": {"column": "observed"},
            "where": {"applicable": "yes"},
            "meta": {
                "notes": "every finding is computable: its inputs are published, measured and non-zero where divided by (a "
                "finding with an input recorded as not applicable on an engine, or not measured by the suite, or not applied at this scale, is not applicable)",
                "generated": True,
            },
        }
    ]
    for f in definition.get("findings", []):
        band = band_at(f, scale)
        if band.not_applicable:
            continue
        kwargs: dict[str, Any] = {"column": "observed"}
        if band.min is not None:
            kwargs["min_value"] = band.min
        if band.max is not None:
            kwargs["max_value"] = band.max
        if band.strict_min and band.min is not None:
            kwargs["strict_min"] = True  # a tie, or the opposite's edge, is not the seed's conclusion
        if band.strict_max and band.max is not None:
            kwargs["strict_max"] = True
        entries.append(
            {
                "type": "expect_column_values_to_be_between",
                "kwargs": kwargs,
                "where": {"finding": f["id"], "applicable": "yes", "disturbed": "no"},
                "meta": {
                    "finding": f["id"],
                    "notes": f.get("description", ""),
                    "seed": f.get("seed"),
                    "scale": scale,
                    "finding_kind": f.get("kind", "timing"),
                    "band_reason": band.reason,
                    "generated": True,
                },
            }
        )
    entries.extend(definition.get("expectations") or [])
    return entries
