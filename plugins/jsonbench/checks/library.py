"""The expectation files of ``include/expectations/`` and how they become GX expectation suites.

Files (every one JSON; a suite adds its own by adding files, no code):

* ``sanity.json`` (and optionally ``<suite>.sanity.json``): GX expectations per frame
  (``measurements``, ``completeness``), run on every run;
* ``<suite>.reproduction.json``: the seed's findings, each a ratio of published values with a
  tolerance band (see :mod:`jsonbench.checks.findings`), plus optional raw GX expectations on the
  findings frame;
* ``<suite>.seed.json``: the seed's own figures, for the report;
* ``drift.json`` (and optionally ``<suite>.drift.json`` overriding keys): the drift policy.

An expectation entry is a GX 1.x expectation configuration (``type``, ``kwargs``, ``meta``) with
one shorthand: ``where`` (``{"unit": "bytes", "status": "ok"}``) becomes GX's object-style
``row_condition`` (``Column("unit") == "bytes"`` ANDed with the rest); see :func:`row_condition`.
"""

from __future__ import annotations

import copy
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.errors import BenchmarkError, ConfigError


def expectations_dir() -> Path:
    """``$JSONBENCH_EXPECTATIONS_DIR`` if set (tests point it at altered copies), else ``include/expectations``."""
    override = os.environ.get("JSONBENCH_EXPECTATIONS_DIR")
    return Path(override) if override else paths.expectations_dir()


def _load(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc


@dataclass
class Library:
    """Everything under the expectations folder, parsed."""

    root: Path
    sanity: dict[str, Any]
    suite_sanity: dict[str, dict[str, Any]] = field(default_factory=dict)
    reproduction: dict[str, dict[str, Any]] = field(default_factory=dict)
    seeds: dict[str, dict[str, Any]] = field(default_factory=dict)
    drift_defaults: dict[str, Any] = field(default_factory=dict)
    suite_drift: dict[str, dict[str, Any]] = field(default_factory=dict)

    def drift_policy(self, suite: str) -> dict[str, Any]:
        """``drift.json`` with ``<suite>.drift.json`` laid over it (``units`` merged per unit)."""
        policy = copy.deepcopy(self.drift_defaults)
        override = self.suite_drift.get(suite, {})
        for key, value in override.items():
            if key == "units" and isinstance(value, dict):
                policy.setdefault("units", {}).update(value)
            elif key == "min_magnitude" and isinstance(value, dict):
                mags = policy.setdefault("min_magnitude", {})
                mags.setdefault("units", {}).update(value.get("units") or {})
                if "default" in value:
                    mags["default"] = value["default"]
            elif key == "tolerances" and isinstance(value, dict):
                policy.setdefault("tolerances", {}).update(value)
            else:
                policy[key] = value
        return policy


def load_library(root: Path | None = None) -> Library:
    """Parse every expectation file under ``root`` (default :func:`expectations_dir`)."""
    root = root or expectations_dir()
    if not (root / "sanity.json").exists():
        raise FileNotFoundError(f"no sanity.json under {root}")
    lib = Library(root=root, sanity=_load(root / "sanity.json"))
    lib.drift_defaults = _load(root / "drift.json") if (root / "drift.json").exists() else {}
    for path in sorted(root.glob("*.json")):
        parts = path.name.split(".")
        if len(parts) != 3:
            continue
        suite, kind = parts[0], parts[1]
        if kind == "reproduction":
            lib.reproduction[suite] = _load(path)
        elif kind == "seed":
            lib.seeds[suite] = _load(path)
        elif kind == "sanity":
            lib.suite_sanity[suite] = _load(path)
        elif kind == "drift":
            lib.suite_drift[suite] = _load(path)
    return lib


# -- GX -----------------------------------------------------------------------------------------


def row_condition(where: dict[str, Any]) -> Any:
    """GX 1.x row condition (``great_expectations.expectations.row_conditions``) from the ``where`` shorthand.

    ``{"col": v}`` -> ``col == v``; ``{"col": {"in": [...]}}``, ``{"not_in": [...]}``, ``{"ne": v}``;
    several keys are ANDed (GX allows AND groups of comparisons).
    """
    from great_expectations.expectations.row_conditions import AndCondition, Column, Condition

    conds: list[Condition] = []
    for column, spec in where.items():
        col = Column(column)
        if isinstance(spec, dict):
            ((op, value),) = spec.items()
            if op == "in":
                conds.append(col.is_in(value))
            elif op == "not_in":
                conds.append(col.is_not_in(value))
            elif op == "ne":
                conds.append(col != value)
            else:
                raise ValueError(f"unknown operator {op!r} in where clause {where!r}")
        else:
            conds.append(col == spec)
    if not conds:
        return None
    return conds[0] if len(conds) == 1 else AndCondition(conditions=conds)


def expectation(entry: dict[str, Any], extra_where: dict[str, Any] | None = None) -> Any:
    """A GX expectation object from one entry of an expectation file."""
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    kwargs = dict(entry.get("kwargs", {}))
    where = {**(entry.get("where") or {}), **(extra_where or {})}
    if where:
        if "row_condition" in kwargs:
            raise ValueError(f"expectation {entry!r}: give either 'where' or kwargs.row_condition, not both")
        kwargs["row_condition"] = row_condition(where)
    meta = dict(entry.get("meta", {}))
    if where:
        meta.setdefault("where", where)
    return ExpectationConfiguration(type=entry["type"], kwargs=kwargs, meta=meta).to_domain_obj()


# -- validation, before any engine starts ---------------------------------------------------------------
# Called by the plan task (and the CLI): a malformed expectation file fails the run there, naming the
# file and the field, instead of failing the check after an hour of benchmarking.

_KINDS = ("reproduction", "seed", "sanity", "drift")
_OPERATORS = ("in", "not_in", "ne")


class ExpectationFileError(ConfigError):
    """An expectation file is malformed; ``path`` is the file, ``field`` the JSON path in it (``findings[2].band``)."""

    def __init__(self, path: Path, field: str, message: str) -> None:
        BenchmarkError.__init__(self, f"expectation file {path}: {field}: {message}")
        self.path, self.field = str(path), field


def _need(ok: bool, path: Path, field: str, message: str) -> None:
    if not ok:
        raise ExpectationFileError(path, field, message)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _names(item: Any, *keys: str) -> bool:
    return isinstance(item, dict) and all(isinstance(item.get(k), str) for k in keys)


class _GxMemo:
    """The entries Great Expectations has already built under this GX version, by the digest of their JSON.

    Building an entry is what makes GX itself the judge of a type or a kwarg, and the first one imports GX: about 5 s of
    every plan on 2 cores, for files that did not change since the last plan (a one-cell run's overhead). An
    entry GX accepted once is accepted again by the same version, so only entries not seen before are built; a
    malformed one never enters the memo. Kept in ``.cache/gx-accepted/<GX version>.txt``; a memo that cannot be read
    or written (a read-only checkout) only means every entry is built, as before.
    """

    def __init__(self) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            self.file: Path | None = paths.PROJECT_ROOT / ".cache" / "gx-accepted" / f"{version('great_expectations')}.txt"
        except PackageNotFoundError:
            self.file = None
        self.known: set[str] = set()
        self.new: set[str] = set()
        try:
            if self.file is not None and self.file.exists():
                self.known = set(self.file.read_text(encoding="utf-8").split())
        except OSError:
            self.known = set()

    @staticmethod
    def digest(entry: dict[str, Any]) -> str:
        import hashlib

        return hashlib.sha256(json.dumps(entry, sort_keys=True, default=str).encode()).hexdigest()

    def save(self) -> None:
        if self.file is None or not self.new:
            return
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text("\n".join(sorted(self.known | self.new)) + "\n", encoding="utf-8")
            tmp.replace(self.file)
        except OSError:
            pass


#: The memo of the validation under way (set by :func:`validate_library` for its duration).
_MEMO: _GxMemo | None = None


def _check_entry(path: Path, field: str, entry: Any) -> None:
    """One GX expectation entry: known type, ``where`` shorthand well formed, kwargs accepted by GX itself."""
    _need(isinstance(entry, dict), path, field, f"an expectation must be an object, got {type(entry).__name__}")
    _need(isinstance(entry.get("type"), str), path, f"{field}.type", "missing (a GX expectation type, e.g. expect_column_to_exist)")
    for key in ("kwargs", "where", "meta"):
        _need(isinstance(entry.get(key, {}), dict), path, f"{field}.{key}", "must be an object")
    for column, spec in (entry.get("where") or {}).items():
        if isinstance(spec, dict):
            ok = len(spec) == 1 and next(iter(spec)) in _OPERATORS
            _need(ok, path, f"{field}.where.{column}", f"an operator object has one key of {list(_OPERATORS)}, got {sorted(spec)}")
    digest = _GxMemo.digest(entry)
    if _MEMO is not None and digest in _MEMO.known:
        return
    try:
        expectation(entry)
    except Exception as exc:  # GX's own words: unknown type, missing or mistyped kwargs
        what = f"{field}.type" if type(exc).__name__ == "ExpectationNotFoundError" else f"{field}.kwargs"
        raise ExpectationFileError(path, what, f"{entry['type']}: {' '.join(str(exc).split())[:400]}") from None
    if _MEMO is not None:
        _MEMO.new.add(digest)


def _check_band(path: Path, field: str, band: Any) -> None:
    """``{"min": number|null, "max": number|null}``, not both null, min <= max."""
    _need(isinstance(band, dict), path, field, 'missing (a finding needs its tolerance band: {"min": ..., "max": ...})')
    _check_min_max(path, field, band, "a number or null", "min and max cannot both be null")


def _check_min_max(path: Path, field: str, bounds: dict[str, Any], number: str, neither: str) -> None:
    """``bounds``' ``min`` and ``max`` (a band's or a host fact's): each a number or left out, at least one
    given, min <= max. ``number`` says what an end must be, ``neither`` what is wrong when both are left out."""
    for end in ("min", "max"):
        value = bounds.get(end)
        _need(value is None or _is_number(value), path, f"{field}.{end}", f"must be {number}, got {value!r}")
    _need(bounds.get("min") is not None or bounds.get("max") is not None, path, field, neither)
    if bounds.get("min") is not None and bounds.get("max") is not None:
        _need(bounds["min"] <= bounds["max"], path, field, f"min {bounds['min']} is above max {bounds['max']}")


#: The keys a per-scale band may carry; anything else (``provisional``, a typo) is refused, since the
#: checks would silently ignore it.
_BAND_KEYS = ("min", "max", "reason", "derived_from", "not_derived", "seed_outside", "rule", "mechanism")


def _check_reproduction(path: Path, data: dict[str, Any], seed: dict[str, Any] | None = None) -> None:
    """A reproduction file: every finding (see :func:`_check_finding`), its raw expectations, and each band as GX builds it."""
    from jsonbench.checks.findings import SCALES, finding_expectations

    findings = data.get("findings")
    _need(isinstance(findings, list), path, "findings", "missing or not a list")
    assert isinstance(findings, list)  # _need() raised otherwise
    runs = _recorded_runs(path, data)
    from jsonbench.checks.bandrule import load_arithmetic

    arithmetic = load_arithmetic(path.parent, path.name.split(".")[0])
    seen: set[str] = set()
    for i, f in enumerate(findings):
        field = f"findings[{i}]"
        _need(isinstance(f, dict), path, field, "a finding must be an object")
        _need(isinstance(f.get("id"), str) and bool(f["id"]), path, f"{field}.id", "missing")
        _need(f["id"] not in seen, path, f"{field}.id", f"{f['id']!r} appears twice")
        seen.add(f["id"])
        _check_finding(path, field, f, seed, runs, arithmetic)
    for i, entry in enumerate(data.get("expectations") or []):
        _check_entry(path, f"expectations[{i}]", entry)
    for scale in SCALES:  # every finding applied at a scale becomes one GX expectation: GX builds each
        for entry in finding_expectations({"findings": findings}, scale)[1:]:  # the first one is frame-wide
            fid = entry.get("meta", {}).get("finding", "?")
            _check_entry(path, f"findings[{fid}].bands.{scale}", entry)


def _recorded_runs(path: Path, data: dict[str, Any]) -> list[str]:
    """The file's ``recorded_runs`` (``{group: [entry naming a run id, ...] | note}``), flattened: a band's ``derived_from`` must be among them."""
    recorded = data.get("recorded_runs", {})
    _need(isinstance(recorded, dict), path, "recorded_runs", "must be an object of group -> list of run entries (or a note)")
    out: list[str] = []
    for group, entries in recorded.items():
        ok = isinstance(entries, str) or (isinstance(entries, list) and all(isinstance(e, str) for e in entries))
        _need(ok, path, f"recorded_runs.{group}", "must be a list of strings naming runs, or a note")
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
        _need(ok, path, f"{field}.{side}", "must be a non-empty list of terms" if side == "numerator" else "must be a list")
        for j, term in enumerate(terms):
            tf = f"{field}.{side}[{j}]"
            _need(_names(term, "workload", "metric"), path, tf, "a term names a workload and a metric")
            _need(term.get("statistic", "value") in STATISTICS, path, f"{tf}.statistic", f"must be one of {list(STATISTICS)}")
            if f.get("scope") == "cross_engine":
                _need(isinstance(term.get("engine"), str), path, f"{tf}.engine", "every term of a cross-engine finding names its engine")
    _need(f.get("kind", "timing") in KINDS, path, f"{field}.kind", f"must be one of {list(KINDS)}, got {f.get('kind')!r}")
    _need(f.get("scope", "engine") in ("engine", "cross_engine"), path, f"{field}.scope", "must be engine or cross_engine")
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
    _need(
        isinstance(got, list),
        path,
        field,
        f"missing or not a list: each finding says what its value depends on, from {list(DEPENDENCIES)}, or []",
    )
    deps: list[Any] = got if isinstance(got, list) else []
    bad = sorted(set(deps) - set(DEPENDENCIES))
    _need(not bad, path, field, f"unknown {bad}; one of {list(DEPENDENCIES)}")
    host = sorted(set(deps) & HOST_DEPENDENCIES)
    _need(
        f.get("kind", "timing") != "deterministic" or not host, path, field, f"a deterministic fact depends on no host property, got {host}"
    )


def _check_requires(path: Path, field: str, requires: Any) -> None:
    """``requires``: capabilities (a string an input's ``not_applicable`` reason names, e.g. ``lz4``) and host
    facts (contract C2: ``{"fact": "host_cores", "min": 3, "why": "..."}``; ``min`` and/or ``max``)."""
    from jsonbench.checks.findings import HOST_FACTS

    _need(isinstance(requires, list), path, field, "must be a list of capabilities (strings) and host facts ({fact, min, max, why})")
    for i, need in enumerate(requires):
        rf = f"{field}[{i}]"
        if isinstance(need, str):
            _need(bool(need.strip()), path, rf, "a capability needs a name")
            continue
        _need(isinstance(need, dict), path, rf, f"a capability (string) or a host fact ({{fact, min, max, why}}), got {need!r}")
        _need(need.get("fact") in HOST_FACTS, path, f"{rf}.fact", f"must be one of {list(HOST_FACTS)}, got {need.get('fact')!r}")
        unknown = sorted(set(need) - {"fact", "min", "max", "why"})
        _need(not unknown, path, rf, f"unknown keys {unknown} (a host fact takes fact, min, max, why)")
        _check_min_max(path, rf, need, "a number", "a host fact needs a min or a max")
        _need(isinstance(need.get("why"), str) and bool(need["why"].strip()), path, f"{rf}.why", "say why the finding needs it")


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
    _need(isinstance(opposite, dict), path, f"{field}.opposite", "must be an object {below, above}")
    for end, value in opposite.items():
        ok = end in ("below", "above") and _is_number(value)
        _need(ok, path, f"{field}.opposite.{end}", f"below/above take a number, got {value!r}")
    below, above = opposite.get("below"), opposite.get("above")
    if f.get("kind", "timing") == "timing":
        ok = below is not None or above is not None
        _need(ok, path, f"{field}.opposite", "a timing finding names its opposite conclusion ({below: x} and/or {above: y})")
    if below is not None and above is not None:
        _need(below < above, path, f"{field}.opposite", f"below {below} must be under above {above}")
    value, source = seed_direction(f, seed)
    if value is None:
        return
    stated = (f.get("seed") or {}).get("value")
    if isinstance(stated, (int, float)) and source == "the seed file's figures":
        close = math.isclose(value, stated, rel_tol=0.02, abs_tol=1e-9)
        _need(close, path, f"{field}.seed.value", f"{stated} disagrees with {value:.4g} computed from the seed file's figures")
    if below is not None:
        _need(value > below, path, f"{field}.opposite.below", f"the seed's {value:.4g} ({source}) is itself in the opposite (< {below})")
    if above is not None:
        _need(value < above, path, f"{field}.opposite.above", f"the seed's {value:.4g} ({source}) is itself in the opposite (> {above})")


def _check_seed_range(path: Path, field: str, f: dict[str, Any]) -> None:
    """``seed.range``: the seed's own spread for this finding, ``[low, high]`` with a ``range_source`` saying where it is printed."""
    rng = (f.get("seed") or {}).get("range")
    if rng is None:
        return
    ok = isinstance(rng, list) and len(rng) == 2 and all(_is_number(x) and x > 0 for x in rng) and rng[0] <= rng[1]
    _need(ok, path, field, f"must be [low, high], two positive numbers, low <= high, got {rng!r}")
    src = (f.get("seed") or {}).get("range_source")
    _need(isinstance(src, str) and bool(src.strip()), path, f"{field}_source", "say where the seed prints this spread")


def _check_bands(path: Path, field: str, finding: dict[str, Any], runs: list[str], arithmetic: dict[str, Any] | None = None) -> None:
    """Per-scale ``bands`` (``{scale: {min, max, reason, derived_from, ...} | {not_applicable: reason}}``) or one all-scale ``band``."""
    from jsonbench.checks.findings import SCALES

    bands = finding.get("bands")
    if bands is None:
        _need(
            "band" in finding,
            path,
            f"{field}.bands",
            'missing (a finding needs its tolerance band per scale: {"laptop": {"min": ..., "max": ..., "reason": ...}})',
        )
        _check_band(path, f"{field}.band", finding["band"])
        _check_band_rules(path, f"{field}.band", finding, finding["band"], None)
        return
    from jsonbench.checks.bandrule import band_spec, differs, governed

    _need(isinstance(bands, dict) and bool(bands), path, f"{field}.bands", "must be an object of scale -> band")
    for scale, spec in bands.items():
        sf = f"{field}.bands.{scale}"
        _need(scale in SCALES, path, sf, f"unknown scale {scale!r} (scales: {', '.join(SCALES)})")
        _need(isinstance(spec, dict), path, sf, "must be an object")
        timing = finding.get("kind", "timing") == "timing"
        if timing:
            _need(
                "not_applicable" not in spec,
                path,
                f"{sf}.not_applicable",
                'a timing finding not judged at a scale is gated: {"gate": "why"}',
            )
        if "gate" in spec:
            _need(timing, path, f"{sf}.gate", 'a fact not applied at a scale says {"not_applicable": "why"}')
            _need(set(spec) == {"gate"} and bool(str(spec["gate"]).strip()), path, f"{sf}.gate", 'a gate is {"gate": "why"}, nothing else')
            continue
        if "not_applicable" in spec:
            _need(bool(str(spec["not_applicable"]).strip()), path, f"{sf}.not_applicable", "needs a reason")
            continue
        _check_band(path, sf, spec)
        unknown = sorted(set(spec) - set(_BAND_KEYS))
        _need(not unknown, path, sf, f"unknown keys {unknown} (a band takes {', '.join(_BAND_KEYS)})")
        _need(bool(str(spec.get("reason") or finding.get("band_reason") or "").strip()), path, f"{sf}.reason", "a band needs its reason")
        _check_derivation(path, sf, spec, runs)
        _check_band_rules(path, sf, finding, spec, scale)
        mech = spec.get("mechanism")
        if mech is not None:
            _need(
                mech in (arithmetic or {}),
                path,
                f"{sf}.mechanism",
                f"{mech!r} is not under arithmetic: in {path.name.split('.')[0]}.mechanisms.yaml",
            )
        if governed(finding):
            why = differs(spec, band_spec(finding, scale, spec, arithmetic or {}))
            _need(why is None, path, sf, f"not the band rule's (jsonbench.checks.bandrule): {why}; run `jsonbench-dev bands --write`")


def _check_derivation(path: Path, field: str, spec: dict[str, Any], runs: list[str]) -> None:
    """``derived_from``: the run ids the band was derived from (each named in ``recorded_runs``), or ``[]`` with ``not_derived``."""
    derived = spec.get("derived_from")
    ok = isinstance(derived, list) and all(isinstance(r, str) and r for r in derived)
    _need(ok, path, f"{field}.derived_from", 'name the runs the band was derived from (run ids), or [] with "not_derived": why')
    assert isinstance(derived, list)
    for i, run in enumerate(derived):
        _need(any(run in entry for entry in runs), path, f"{field}.derived_from[{i}]", f"run {run!r} is not listed in recorded_runs")
    why = str(spec.get("not_derived") or "").strip()
    if derived:
        _need("not_derived" not in spec, path, f"{field}.not_derived", "a band derived from runs cannot also say it is not derived")
    else:
        _need(bool(why), path, f"{field}.not_derived", "a band derived from no run says why (derived_from is empty)")


def _check_band_rules(path: Path, field: str, f: dict[str, Any], spec: dict[str, Any], scale: str | None) -> None:
    """The band excludes the opposite conclusion; a seed value outside it (at its own scale) carries a sentence saying why."""
    from jsonbench.checks.findings import band_at

    opposite = f.get("opposite") or {}
    lo, hi = spec.get("min"), spec.get("max")
    if f.get("kind", "timing") == "timing":
        below, above = opposite.get("below"), opposite.get("above")
        if below is not None:
            _need(lo is not None and lo >= below, path, f"{field}.min", f"must exclude the opposite (< {below}), got {lo!r}")
        if above is not None:
            _need(hi is not None and hi <= above, path, f"{field}.max", f"must exclude the opposite (> {above}), got {hi!r}")
    value = (f.get("seed") or {}).get("value")
    if not _is_number(value) or (scale != "full" and (f.get("seed") or {}).get("scales_with")):
        return  # no seed figure, or one that counts the seed's rows, read at the seed's own scale only
    band = band_at(f, scale)
    below_lo = lo is not None and (value < lo or (band.strict_min and value == lo))
    above_hi = hi is not None and (value > hi or (band.strict_max and value == hi))
    if below_lo or above_hi:
        if f.get("kind", "timing") == "timing":  # a timing band holds the seed's figure unless a mechanism's arithmetic says why not
            ok = bool(spec.get("mechanism"))
            _need(
                ok,
                path,
                f"{field}.mechanism",
                f"the seed's {value} lies outside [{lo}, {hi}]: name the mechanism (its arithmetic), or move the band",
            )
        else:
            ok = bool(str(spec.get("seed_outside") or "").strip())
            _need(ok, path, f"{field}.seed_outside", f"the seed's {value} lies outside [{lo}, {hi}]: say why, or move the band")


def _check_sanity(path: Path, data: dict[str, Any]) -> None:
    frames = data.get("frames")
    _need(isinstance(frames, dict), path, "frames", "missing or not an object of frame name -> {expectations: [...]}")
    assert isinstance(frames, dict)  # _need() raised otherwise
    for name, frame in frames.items():
        ok = isinstance(frame, dict) and isinstance(frame.get("expectations", []), list)
        _need(ok, path, f"frames.{name}.expectations", "must be a list")
        for i, entry in enumerate(frame.get("expectations", [])):
            _check_entry(path, f"frames.{name}.expectations[{i}]", entry)


def _check_seed(path: Path, data: dict[str, Any]) -> None:
    figures = data.get("figures", [])
    _need(isinstance(figures, list), path, "figures", "must be a list")
    for i, fig in enumerate(figures):
        _need(_names(fig, "workload", "metric"), path, f"figures[{i}]", "a figure names a workload and a metric")
        _need(_is_number(fig.get("value")), path, f"figures[{i}].value", f"must be a number, got {fig.get('value')!r}")


def _check_drift(path: Path, data: dict[str, Any]) -> None:
    """The drift policy (``drift.json``, a suite's ``<suite>.drift.json`` overrides): numbers where the check computes."""
    keys = ("min_history", "deterministic_min_history", "window", "window_len", "recent_runs", "max_pvalue", "tolerance")
    for key in keys:
        if key in data:
            _need(_is_number(data[key]) and data[key] >= 0, path, key, f"must be a non-negative number, got {data[key]!r}")
    if "points" in data:
        _need(data["points"] in ("best", "samples"), path, "points", f"must be 'best' or 'samples', got {data['points']!r}")
    magnitude = data.get("min_magnitude", {})
    _need(isinstance(magnitude, dict), path, "min_magnitude", "must be an object {default, units: {unit: number}}")
    if "default" in magnitude:
        value = magnitude["default"]
        _need(_is_number(value) and value >= 0, path, "min_magnitude.default", f"must be a non-negative number, got {value!r}")
    units = magnitude.get("units", {})
    _need(isinstance(units, dict), path, "min_magnitude.units", "must be an object of unit -> number")
    for unit, value in units.items():
        _need(_is_number(value) and value >= 0, path, f"min_magnitude.units.{unit}", f"must be a non-negative number, got {value!r}")
    for key in ("deterministic", "statistical", "deterministic_reason"):
        _need(
            key not in data,
            path,
            key,
            "metric kinds are declared by the suite beside each metric (Suite.metric_kind), not by patterns; remove this key",
        )
    tolerances = data.get("tolerances", {})
    _need(
        isinstance(tolerances, dict), path, "tolerances", "must be an object of metric (or workload/metric) -> number or {tolerance, floor}"
    )
    for name, spec in tolerances.items():
        for sub, value in spec.items() if isinstance(spec, dict) else [("", spec)]:
            field = f"tolerances.{name}" + (f".{sub}" if sub else "")
            _need(sub in ("", "tolerance", "floor"), path, field, "a tolerance object has only 'tolerance' and 'floor'")
            _need(_is_number(value) and value >= 0, path, field, f"must be a non-negative number, got {value!r}")


def validate_library(root: Path | None = None) -> Library:
    """Parse and check every expectation file under ``root``; raise :class:`ExpectationFileError` naming file and field.

    The one validator of the expectation files (the plan step and the tests call it). Checks JSON
    syntax, the file name's kind, and per kind the fields the checks rely on: every expectation
    entry is built by Great Expectations itself (an unknown type or a missing kwarg fails here),
    every finding has an id, terms, requirements the checks can evaluate, an opposite the seed's
    own value stays out of, and per scale a band ``{min, max}`` that excludes that opposite, names
    the runs it was derived from (or says why none), and says why when the seed's value lies
    outside it; seed figures and drift thresholds are numbers. Returns the parsed :class:`Library`. Entries GX built
    once under its installed version are not built again (:class:`_GxMemo`).
    """
    global _MEMO
    root = root or expectations_dir()
    seeds: dict[str, dict[str, Any]] = {}
    _MEMO = memo = _GxMemo()
    try:
        _validate_files(root, seeds)
    finally:
        _MEMO = None
    memo.save()  # only after every file passed
    return load_library(root)


def _validate_files(root: Path, seeds: dict[str, dict[str, Any]]) -> None:
    for path in sorted(root.glob("*.json"), key=lambda p: (".reproduction." in p.name, p.name)):  # seeds before findings
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ExpectationFileError(path, f"line {exc.lineno} column {exc.colno}", f"not valid JSON: {exc.msg}") from None
        _need(isinstance(data, dict), path, "(top level)", f"must be a JSON object, got {type(data).__name__}")
        parts = path.name.split(".")
        kind = parts[1] if len(parts) == 3 else parts[0]
        if len(parts) == 2:
            _need(kind in ("sanity", "drift"), path, "(file name)", "shared files: sanity.json, drift.json; a suite's: <suite>.<kind>.json")
        else:
            _need(len(parts) == 3 and kind in _KINDS, path, "(file name)", f"must be <suite>.<kind>.json with kind one of {list(_KINDS)}")
        if kind == "reproduction":
            _check_reproduction(path, data, seeds.get(parts[0]))
        else:
            {"sanity": _check_sanity, "seed": _check_seed, "drift": _check_drift}[kind](path, data)
        if kind == "seed":
            seeds[parts[0]] = data
