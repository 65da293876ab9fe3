"""The checks of a ``<suite>.reproduction.json`` file: every finding, its opposite, requirements and bands.

A finding is the part of the expectation files that the checks compute with (terms, kinds, scopes,
per-scale bands derived from recorded runs, a band rule's arithmetic), so most of the validation is
here. :func:`check_reproduction` is called by :func:`jsonbench.checks.validate.validate_library`
with the suite's seed file, whose figures give the seed's own direction (:func:`seed_direction`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from jsonbench.checks.validate_entries import check_entry, has_names, is_number, need


def _check_band(path: Path, field: str, band: Any) -> None:
    """``{"min": number|null, "max": number|null}``, not both null, min <= max."""
    need(isinstance(band, dict), path, field, 'missing (a finding needs its tolerance band: {"min": ..., "max": ...})')
    _check_min_max(path, field, band, "a number or null", "min and max cannot both be null")


def _check_min_max(path: Path, field: str, bounds: dict[str, Any], number: str, neither: str) -> None:
    """``bounds``' ``min`` and ``max`` (a band's or a host fact's): each a number or left out, at least one
    given, min <= max. ``number`` says what an end must be, ``neither`` what is wrong when both are left out."""
    for end in ("min", "max"):
        value = bounds.get(end)
        need(value is None or is_number(value), path, f"{field}.{end}", f"must be {number}, got {value!r}")
    need(bounds.get("min") is not None or bounds.get("max") is not None, path, field, neither)
    if bounds.get("min") is not None and bounds.get("max") is not None:
        need(bounds["min"] <= bounds["max"], path, field, f"min {bounds['min']} is above max {bounds['max']}")


#: The keys a per-scale band may carry; anything else (``provisional``, a typo) is refused, since the
#: checks would silently ignore it.
_BAND_KEYS = ("min", "max", "reason", "derived_from", "not_derived", "seed_outside", "rule", "mechanism")


def check_reproduction(path: Path, data: dict[str, Any], seed: dict[str, Any] | None = None) -> None:
    """A reproduction file: every finding (see :func:`_check_finding`), its raw expectations, and each band as GX builds it."""
    from jsonbench.checks.findings import SCALES, finding_expectations

    findings = data.get("findings")
    need(isinstance(findings, list), path, "findings", "missing or not a list")
    assert isinstance(findings, list)  # need() raised otherwise
    runs = _recorded_runs(path, data)
    from jsonbench.checks.bandrule import load_arithmetic

    arithmetic = load_arithmetic(path.parent, path.name.split(".")[0])
    seen: set[str] = set()
    for i, f in enumerate(findings):
        field = f"findings[{i}]"
        need(isinstance(f, dict), path, field, "a finding must be an object")
        need(isinstance(f.get("id"), str) and bool(f["id"]), path, f"{field}.id", "missing")
        need(f["id"] not in seen, path, f"{field}.id", f"{f['id']!r} appears twice")
        seen.add(f["id"])
        _check_finding(path, field, f, seed, runs, arithmetic)
    for i, entry in enumerate(data.get("expectations") or []):
        check_entry(path, f"expectations[{i}]", entry)
    for scale in SCALES:  # every finding applied at a scale becomes one GX expectation: GX builds each
        for entry in finding_expectations({"findings": findings}, scale)[1:]:  # the first one is frame-wide
            fid = entry.get("meta", {}).get("finding", "?")
            check_entry(path, f"findings[{fid}].bands.{scale}", entry)


def _recorded_runs(path: Path, data: dict[str, Any]) -> list[str]:
    """The file's ``recorded_runs`` (``{group: [entry naming a run id, ...] | note}``), flattened: a band's ``derived_from`` must be among them."""
    recorded = data.get("recorded_runs", {})
    need(isinstance(recorded, dict), path, "recorded_runs", "must be an object of group -> list of run entries (or a note)")
    out: list[str] = []
    for group, entries in recorded.items():
        ok = isinstance(entries, str) or (isinstance(entries, list) and all(isinstance(e, str) for e in entries))
        need(ok, path, f"recorded_runs.{group}", "must be a list of strings naming runs, or a note")
        out += [entries] if isinstance(entries, str) else entries
    return out


def _check_finding(
    path: Path, field: str, f: dict[str, Any], seed: dict[str, Any] | None, runs: list[str], arithmetic: dict[str, Any] | None = None
) -> None:
    """One finding: terms, kind, scope, requirements, its opposite against the seed's direction, and every band."""
    from jsonbench.checks.findings import KINDS, STATISTICS

    for side in ("numerator", "denominator"):
        terms = f.get(side, [])
        ok = isinstance(terms, list) and (side == "denominator" or bool(terms))
        need(ok, path, f"{field}.{side}", "must be a non-empty list of terms" if side == "numerator" else "must be a list")
        for j, term in enumerate(terms):
            tf = f"{field}.{side}[{j}]"
            need(has_names(term, "workload", "metric"), path, tf, "a term names a workload and a metric")
            need(term.get("statistic", "value") in STATISTICS, path, f"{tf}.statistic", f"must be one of {list(STATISTICS)}")
            if f.get("scope") == "cross_engine":
                need(isinstance(term.get("engine"), str), path, f"{tf}.engine", "every term of a cross-engine finding names its engine")
    need(f.get("kind", "timing") in KINDS, path, f"{field}.kind", f"must be one of {list(KINDS)}, got {f.get('kind')!r}")
    need(f.get("scope", "engine") in ("engine", "cross_engine"), path, f"{field}.scope", "must be engine or cross_engine")
    _check_requires(path, f"{field}.requires", f.get("requires", []))
    _check_depends_on(path, f"{field}.depends_on", f)
    _check_opposite(path, field, f, seed)
    _check_seed_range(path, f"{field}.seed.range", f)
    _check_bands(path, field, f, runs, arithmetic or {})


#: What a finding's value may depend on besides the engine (``depends_on``): the host's speed, its cores, its
#: memory (a working set near the buffer cache), or this project's data generator where it is not the seed's.
DEPENDENCIES: tuple[str, ...] = ("host_speed", "cores", "memory", "generator")
#: Of those, what changes from host to host: a deterministic fact depends on none of them (checked exactly on every host).
HOST_DEPENDENCIES: frozenset[str] = frozenset({"host_speed", "cores", "memory"})


def _check_depends_on(path: Path, field: str, f: dict[str, Any]) -> None:
    """``depends_on``: a list drawn from :data:`DEPENDENCIES` (empty: nothing but the engine); a deterministic fact names no host dependency."""
    got = f.get("depends_on")
    need(
        isinstance(got, list),
        path,
        field,
        f"missing or not a list: each finding says what its value depends on, from {list(DEPENDENCIES)}, or []",
    )
    deps: list[Any] = got if isinstance(got, list) else []
    bad = sorted(set(deps) - set(DEPENDENCIES))
    need(not bad, path, field, f"unknown {bad}; one of {list(DEPENDENCIES)}")
    host = sorted(set(deps) & HOST_DEPENDENCIES)
    need(
        f.get("kind", "timing") != "deterministic" or not host, path, field, f"a deterministic fact depends on no host property, got {host}"
    )


def _check_requires(path: Path, field: str, requires: Any) -> None:
    """``requires``: capabilities (a string an input's ``not_applicable`` reason names, e.g. ``lz4``) and host
    facts (contract C2: ``{"fact": "host_cores", "min": 3, "why": "..."}``; ``min`` and/or ``max``)."""
    from jsonbench.checks.findings import HOST_FACTS

    need(isinstance(requires, list), path, field, "must be a list of capabilities (strings) and host facts ({fact, min, max, why})")
    for i, req in enumerate(requires):
        rf = f"{field}[{i}]"
        if isinstance(req, str):
            need(bool(req.strip()), path, rf, "a capability needs a name")
            continue
        need(isinstance(req, dict), path, rf, f"a capability (string) or a host fact ({{fact, min, max, why}}), got {req!r}")
        need(req.get("fact") in HOST_FACTS, path, f"{rf}.fact", f"must be one of {list(HOST_FACTS)}, got {req.get('fact')!r}")
        unknown = sorted(set(req) - {"fact", "min", "max", "why"})
        need(not unknown, path, rf, f"unknown keys {unknown} (a host fact takes fact, min, max, why)")
        _check_min_max(path, rf, req, "a number", "a host fact needs a min or a max")
        need(isinstance(req.get("why"), str) and bool(req["why"].strip()), path, f"{rf}.why", "say why the finding needs it")


def seed_direction(f: dict[str, Any], seed: dict[str, Any] | None) -> tuple[float | None, str]:
    """The seed's own value of finding ``f`` and where it comes from.

    Computed from the suite's ``<suite>.seed.json`` figures when every term of the finding has one
    (per-engine findings; the figures name no engine), else the finding's ``seed.value``; None when
    the seed prints neither.
    """
    from jsonbench.checks.findings import Values, finding_value, term_key

    figures = {(fig["workload"], fig.get("variant", "default"), fig["metric"]): fig["value"] for fig in (seed or {}).get("figures", [])}
    terms = list(f.get("numerator") or []) + list(f.get("denominator") or [])
    plain = f.get("scope", "engine") == "engine" and all(t.get("statistic", "value") == "value" for t in terms)
    if figures and terms and plain and all(term_key(t) in figures for t in terms):
        values: Values = {term_key(t): (float(figures[term_key(t)]), "ok") for t in terms}
        observed, _, _ = finding_value(values, f)
        if observed is not None:
            return observed, "the seed file's figures"
    value = (f.get("seed") or {}).get("value")
    return (float(value), "the finding's seed.value") if isinstance(value, (int, float)) and not isinstance(value, bool) else (None, "")


def _check_opposite(path: Path, field: str, f: dict[str, Any], seed: dict[str, Any] | None) -> None:
    """A timing finding names its opposite conclusion, and the seed's own value lies strictly outside it."""
    opposite = f.get("opposite", {})
    need(isinstance(opposite, dict), path, f"{field}.opposite", "must be an object {below, above}")
    for end, value in opposite.items():
        ok = end in ("below", "above") and is_number(value)
        need(ok, path, f"{field}.opposite.{end}", f"below/above take a number, got {value!r}")
    below, above = opposite.get("below"), opposite.get("above")
    if f.get("kind", "timing") == "timing":
        ok = below is not None or above is not None
        need(ok, path, f"{field}.opposite", "a timing finding names its opposite conclusion ({below: x} and/or {above: y})")
    if below is not None and above is not None:
        need(below < above, path, f"{field}.opposite", f"below {below} must be under above {above}")
    value, source = seed_direction(f, seed)
    if value is None:
        return
    stated = (f.get("seed") or {}).get("value")
    if isinstance(stated, (int, float)) and source == "the seed file's figures":
        close = math.isclose(value, stated, rel_tol=0.02, abs_tol=1e-9)
        need(close, path, f"{field}.seed.value", f"{stated} disagrees with {value:.4g} computed from the seed file's figures")
    if below is not None:
        need(value > below, path, f"{field}.opposite.below", f"the seed's {value:.4g} ({source}) is itself in the opposite (< {below})")
    if above is not None:
        need(value < above, path, f"{field}.opposite.above", f"the seed's {value:.4g} ({source}) is itself in the opposite (> {above})")


def _check_seed_range(path: Path, field: str, f: dict[str, Any]) -> None:
    """``seed.range``: the seed's own spread for this finding, ``[low, high]`` with a ``range_source`` saying where it is printed."""
    rng = (f.get("seed") or {}).get("range")
    if rng is None:
        return
    ok = isinstance(rng, list) and len(rng) == 2 and all(is_number(x) and x > 0 for x in rng) and rng[0] <= rng[1]
    need(ok, path, field, f"must be [low, high], two positive numbers, low <= high, got {rng!r}")
    src = (f.get("seed") or {}).get("range_source")
    need(isinstance(src, str) and bool(src.strip()), path, f"{field}_source", "say where the seed prints this spread")


def _check_bands(path: Path, field: str, finding: dict[str, Any], runs: list[str], arithmetic: dict[str, Any] | None = None) -> None:
    """Per-scale ``bands`` (``{scale: {min, max, reason, derived_from, ...} | {not_applicable: reason}}``) or one all-scale ``band``."""
    from jsonbench.checks.findings import SCALES

    bands = finding.get("bands")
    if bands is None:
        need(
            "band" in finding,
            path,
            f"{field}.bands",
            'missing (a finding needs its tolerance band per scale: {"laptop": {"min": ..., "max": ..., "reason": ...}})',
        )
        _check_band(path, f"{field}.band", finding["band"])
        _check_band_rules(path, f"{field}.band", finding, finding["band"], None)
        return
    from jsonbench.checks.bandrule import band_spec, differs, governed

    need(isinstance(bands, dict) and bool(bands), path, f"{field}.bands", "must be an object of scale -> band")
    for scale, spec in bands.items():
        sf = f"{field}.bands.{scale}"
        need(scale in SCALES, path, sf, f"unknown scale {scale!r} (scales: {', '.join(SCALES)})")
        need(isinstance(spec, dict), path, sf, "must be an object")
        timing = finding.get("kind", "timing") == "timing"
        if timing:
            need(
                "not_applicable" not in spec,
                path,
                f"{sf}.not_applicable",
                'a timing finding not judged at a scale is gated: {"gate": "why"}',
            )
        if "gate" in spec:
            need(timing, path, f"{sf}.gate", 'a fact not applied at a scale says {"not_applicable": "why"}')
            need(set(spec) == {"gate"} and bool(str(spec["gate"]).strip()), path, f"{sf}.gate", 'a gate is {"gate": "why"}, nothing else')
            continue
        if "not_applicable" in spec:
            need(bool(str(spec["not_applicable"]).strip()), path, f"{sf}.not_applicable", "needs a reason")
            continue
        _check_band(path, sf, spec)
        unknown = sorted(set(spec) - set(_BAND_KEYS))
        need(not unknown, path, sf, f"unknown keys {unknown} (a band takes {', '.join(_BAND_KEYS)})")
        need(bool(str(spec.get("reason") or finding.get("band_reason") or "").strip()), path, f"{sf}.reason", "a band needs its reason")
        _check_derivation(path, sf, spec, runs)
        _check_band_rules(path, sf, finding, spec, scale)
        mech = spec.get("mechanism")
        if mech is not None:
            need(
                mech in (arithmetic or {}),
                path,
                f"{sf}.mechanism",
                f"{mech!r} is not under arithmetic: in {path.name.split('.')[0]}.mechanisms.yaml",
            )
        if governed(finding):
            why = differs(spec, band_spec(finding, scale, spec, arithmetic or {}))
            need(why is None, path, sf, f"not the band rule's (jsonbench.checks.bandrule): {why}; run `jsonbench-dev bands --write`")


def _check_derivation(path: Path, field: str, spec: dict[str, Any], runs: list[str]) -> None:
    """``derived_from``: the run ids the band was derived from (each named in ``recorded_runs``), or ``[]`` with ``not_derived``."""
    derived = spec.get("derived_from")
    ok = isinstance(derived, list) and all(isinstance(r, str) and r for r in derived)
    need(ok, path, f"{field}.derived_from", 'name the runs the band was derived from (run ids), or [] with "not_derived": why')
    assert isinstance(derived, list)
    for i, run in enumerate(derived):
        need(any(run in entry for entry in runs), path, f"{field}.derived_from[{i}]", f"run {run!r} is not listed in recorded_runs")
    why = str(spec.get("not_derived") or "").strip()
    if derived:
        need("not_derived" not in spec, path, f"{field}.not_derived", "a band derived from runs cannot also say it is not derived")
    else:
        need(bool(why), path, f"{field}.not_derived", "a band derived from no run says why (derived_from is empty)")


def _check_band_rules(path: Path, field: str, f: dict[str, Any], spec: dict[str, Any], scale: str | None) -> None:
    """The band excludes the opposite conclusion; a seed value outside it (at its own scale) carries a sentence saying why."""
    from jsonbench.checks.findings import band_at

    opposite = f.get("opposite") or {}
    lo, hi = spec.get("min"), spec.get("max")
    if f.get("kind", "timing") == "timing":
        below, above = opposite.get("below"), opposite.get("above")
        if below is not None:
            need(lo is not None and lo >= below, path, f"{field}.min", f"must exclude the opposite (< {below}), got {lo!r}")
        if above is not None:
            need(hi is not None and hi <= above, path, f"{field}.max", f"must exclude the opposite (> {above}), got {hi!r}")
    value = (f.get("seed") or {}).get("value")
    if not is_number(value) or (scale != "full" and (f.get("seed") or {}).get("scales_with")):
        return  # no seed figure, or one that counts the seed's rows, read at the seed's own scale only
    band = band_at(f, scale)
    below_lo = lo is not None and (value < lo or (band.strict_min and value == lo))
    above_hi = hi is not None and (value > hi or (band.strict_max and value == hi))
    if below_lo or above_hi:
        if f.get("kind", "timing") == "timing":  # a timing band holds the seed's figure unless a mechanism's arithmetic says why not
            ok = bool(spec.get("mechanism"))
            need(
                ok,
                path,
                f"{field}.mechanism",
                f"the seed's {value} lies outside [{lo}, {hi}]: name the mechanism (its arithmetic), or move the band",
            )
        else:
            ok = bool(str(spec.get("seed_outside") or "").strip())
            need(ok, path, f"{field}.seed_outside", f"the seed's {value} lies outside [{lo}, {hi}]: say why, or move the band")
