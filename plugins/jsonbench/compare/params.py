"""A comparison's parameters, checked against the matrix before any engine starts.

A comparison has two arms, ``a`` and ``b``, each an engine id of the matrix with optional server settings
(``{"engine": "postgres-17", "settings": {"work_mem": "4MB"}}``): a new build against an old one and one build
against itself with other settings are the same kind of run. Both arms run the same suites (optionally a subset
of their workloads) at one scale, for ``pairs`` pairs (one number, or staged totals ``[10, 20, 40]``: more pairs
only while a metric is undecided), judged against a margin of practical equivalence, in an order drawn from
``seed``. :func:`resolve_comparison` raises :class:`~jsonbench.errors.ConfigError` naming the first bad field,
as the nightly plan does (:func:`jsonbench.orchestration.plan.resolve`, which this reuses for the scale, the
backend, the hardware label and the results folder).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jsonbench.errors import ConfigError
from jsonbench.matrix import SETTING_NAME_RE, Matrix, load_matrix
from jsonbench.orchestration.plan import RunConfig, params_schema, resolve

if TYPE_CHECKING:  # the statistics (SciPy) are imported when a comparison is resolved, not when the DAG is parsed
    from jsonbench.history.stats.paired import Stage

#: The interval's level, and 1 - the false discovery rate held across metrics.
LEVEL = 0.95
#: The margin of practical equivalence when neither the run nor an A/A comparison of this host gives one.
DEFAULT_MARGIN = 0.02
#: How many stages of pairs a comparison may plan: the DAG holds one mapped task group per stage at parse time.
MAX_STAGES = 4
#: The most pairs a comparison may run (each pair is two engine starts per suite).
MAX_PAIRS = 200
ARMS = ("a", "b")
#: The nightly parameters a comparison passes through as they are (:func:`jsonbench.orchestration.plan.resolve`).
PASSED = ("scale", "backend", "repetitions", "hardware_label", "results_dir")


@dataclass(frozen=True)
class Arm:
    """One side of a comparison: an engine of the matrix and the server settings that override the matrix's."""

    name: str  # "A" or "B"
    engine: str
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``postgres-17`` or ``postgres-17 (work_mem=4MB)``: how tables and pages name the arm."""
        extra = ", ".join(f"{k}={v}" for k, v in sorted(self.settings.items()))
        return f"{self.engine} ({extra})" if extra else self.engine

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "engine": self.engine, "settings": dict(self.settings)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Arm:
        return cls(str(d["name"]), str(d["engine"]), {str(k): str(v) for k, v in (d.get("settings") or {}).items()})


@dataclass(frozen=True)
class ComparisonConfig:
    """A validated comparison."""

    a: Arm
    b: Arm
    family: str
    suites: tuple[str, ...]
    #: The workloads measured per suite (every workload of the suite unless ``workloads`` narrowed them).
    workloads: dict[str, tuple[str, ...]]
    stages: tuple[Stage, ...]
    #: The margin asked for (a share), or None: the host's A/A comparison's, else :data:`DEFAULT_MARGIN`.
    margin: float | None
    seed: int
    run: RunConfig

    @property
    def same_arm(self) -> bool:
        """Whether both arms are one build with one set of settings (an A/A comparison: the host's noise floor)."""
        return self.a.engine == self.b.engine and self.a.settings == self.b.settings


def schema(matrix: Matrix | None = None) -> dict[str, dict[str, Any]]:
    """Keyword arguments of one ``airflow.sdk.Param`` per comparison parameter (the trigger form), in the DAG's order."""
    m = matrix or load_matrix()
    nightly = params_schema(m)
    arm = {
        "type": "object",
        "properties": {
            "engine": {"type": "string", "enum": sorted(m.engines)},
            "settings": {"type": "object", "additionalProperties": {"type": ["string", "number"]}},
        },
        "required": ["engine"],
        "additionalProperties": False,
    }
    first = m.raw["default_engines"][0]
    return {
        "a": {**arm, "default": {"engine": first}, "title": "Arm A", "description": "The baseline: an engine id and its settings."},
        "b": {**arm, "default": {"engine": first}, "title": "Arm B", "description": "The change: an engine id and its settings."},
        "suites": {
            "default": [s for s in m.raw["default_suites"] if m.suites[s]["family"] == m.engines[first]["family"]][:1],
            "type": "array",
            "items": {"type": "string", "enum": sorted(m.suites)},
            "minItems": 1,
            "uniqueItems": True,
            "title": "Suites",
            "description": "The suites both arms run (of the arms' family).",
        },
        "workloads": {
            "default": None,
            "type": ["null", "array"],
            "items": {"type": "string"},
            "title": "Workloads",
            "description": "Only these workloads of the suites (names, or suite/workload). Empty: every workload.",
        },
        "pairs": {
            "default": 10,
            "type": ["integer", "array"],
            "items": {"type": "integer", "minimum": 1},
            "title": "Pairs",
            "description": "Pairs of engine starts: one number, or increasing totals after each stage, e.g. [10, 20, 40].",
        },
        "margin": {
            "default": None,
            "type": ["null", "number"],
            "exclusiveMinimum": 0,
            "exclusiveMaximum": 1,
            "title": "Margin",
            "description": f"Practical equivalence as a share (0.02: 2 %). Empty: this host's A/A comparison's, else {DEFAULT_MARGIN}.",
        },
        "seed": {"default": 0, "type": "integer", "title": "Seed", "description": "Seeds the order of the arms within each pair."},
        **{k: nightly[k] for k in PASSED},
    }


def _arm(p: dict[str, Any], name: str, m: Matrix) -> Arm:
    raw = p.get(name)
    if isinstance(raw, str):
        raw = {"engine": raw}
    if not isinstance(raw, dict) or "engine" not in raw:
        raise ConfigError(name, f'must be an object such as {{"engine": "postgres-17", "settings": {{}}}}, got {raw!r}')
    unknown = sorted(set(raw) - {"engine", "settings"})
    if unknown:
        raise ConfigError(f"{name}.{unknown[0]}", "unknown field of an arm (known: engine, settings)")
    engine = raw["engine"]
    if not isinstance(engine, str) or engine not in m.engines:
        raise ConfigError(f"{name}.engine", f"unknown engine {engine!r}; known: {', '.join(sorted(m.engines))}")
    settings = raw.get("settings") or {}
    if not isinstance(settings, dict):
        raise ConfigError(f"{name}.settings", "must be an object of setting name to value")
    family = m.engines[engine]["family"]
    if settings and not m.families[family].get("server_settings"):
        raise ConfigError(f"{name}.settings", f"engine {engine!r} (family {family}) takes no server settings")
    for key, value in settings.items():
        if not SETTING_NAME_RE.match(str(key)):
            raise ConfigError(f"{name}.settings.{key}", "not a valid setting name")
        if not isinstance(value, (str, int, float)) or isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value)):
            raise ConfigError(f"{name}.settings.{key}", f"value must be a string or number, got {value!r}")
    return Arm(name.upper(), engine, {str(k): str(v) for k, v in settings.items()})


def _stages(value: Any) -> tuple[Stage, ...]:
    from jsonbench.history.stats.paired import min_pairs, stage_levels

    totals = [value] if not isinstance(value, (list, tuple)) else list(value)
    if not totals or any(isinstance(n, bool) or not isinstance(n, int) for n in totals):
        raise ConfigError("pairs", f"must be a number of pairs or a list of increasing totals, got {value!r}")
    if len(totals) > MAX_STAGES:
        raise ConfigError("pairs", f"at most {MAX_STAGES} stages, got {len(totals)}")
    if totals != sorted(set(totals)) or totals[0] < 1:
        raise ConfigError("pairs", f"stages must be increasing positive totals, got {totals}")
    if totals[-1] > MAX_PAIRS:
        raise ConfigError("pairs", f"at most {MAX_PAIRS} pairs, got {totals[-1]}")
    stages = tuple(stage_levels(totals, 1 - LEVEL))
    for s in stages:
        need = min_pairs(s.level)
        if s.pairs < need:
            where = f"stage at {s.pairs} pairs" if len(stages) > 1 else f"{s.pairs} pairs"
            raise ConfigError("pairs", f"{where}: a {s.level:.1%} interval needs at least {need} pairs")
    return stages


def _workloads(p: dict[str, Any], suites: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    from jsonbench.suites import get_suite

    every = {s: tuple(get_suite(s).workloads) for s in suites}
    wanted = p.get("workloads")
    if wanted in (None, [], ""):
        return every
    if isinstance(wanted, str):
        wanted = [w.strip() for w in wanted.split(",") if w.strip()]
    if not isinstance(wanted, list) or not all(isinstance(w, str) for w in wanted):
        raise ConfigError("workloads", f"must be a list of workload names, got {wanted!r}")
    chosen: dict[str, list[str]] = {s: [] for s in suites}
    for w in wanted:
        suite, _, name = w.rpartition("/")
        owners = [s for s in suites if (not suite or s == suite) and name in every[s]]
        if not owners:
            raise ConfigError("workloads", f"{w!r} is no workload of {', '.join(suites)}")
        for s in owners:
            chosen[s].append(name)
    return {s: tuple(w for w in every[s] if w in chosen[s]) for s in suites if chosen[s]}


def resolve_comparison(params: dict[str, Any] | None, matrix: Matrix | None = None, env: dict[str, str] | None = None) -> ComparisonConfig:
    """The comparison's parameters checked; ``ConfigError(field, ...)`` on the first bad one, before any engine starts."""
    m = matrix or load_matrix()
    p = dict(params or {})
    known = set(schema(m))
    unknown = sorted(set(p) - known)
    if unknown:
        raise ConfigError(unknown[0], f"unknown parameter (known: {', '.join(sorted(known))})")
    a, b = _arm(p, "a", m), _arm(p, "b", m)
    family = m.engines[a.engine]["family"]
    if m.engines[b.engine]["family"] != family:
        raise ConfigError("b.engine", f"{b.engine!r} is a {m.engines[b.engine]['family']} engine, arm A's {a.engine!r} a {family} one")
    suites = p.get("suites")
    if isinstance(suites, str):
        suites = [s.strip() for s in suites.split(",") if s.strip()]
    if not isinstance(suites, list) or not suites or not all(isinstance(s, str) for s in suites) or len(set(suites)) != len(suites):
        raise ConfigError("suites", f"must be a non-empty list of suite names, each once, got {suites!r}")
    for s in suites:
        if s not in m.suites:
            raise ConfigError("suites", f"unknown suite {s!r}; known: {', '.join(sorted(m.suites))}")
        if m.suites[s]["family"] != family:
            raise ConfigError("suites", f"suite {s!r} runs on {m.suites[s]['family']} engines, the arms are {family} engines")
    stages = _stages(p.get("pairs", 10))
    margin = p.get("margin")
    if margin is not None and (isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 < margin < 1):
        raise ConfigError("margin", f"must be a positive share below 1 (0.02 is 2 %), got {margin!r}")
    seed = p.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError("seed", f"must be an integer, got {seed!r}")
    workloads = _workloads(p, tuple(suites))
    nightly = {k: p[k] for k in PASSED if p.get(k) is not None}
    engines = list(dict.fromkeys([a.engine, b.engine]))
    cfg = resolve({**nightly, "engines": engines, "suites": list(workloads), "starts": 1}, m, env)
    return ComparisonConfig(a, b, family, tuple(workloads), workloads, stages, None if margin is None else float(margin), seed, cfg)


def arm_key(arm: Arm) -> str:
    """The arm as comparable text (its engine and settings): what an A/A comparison must match to lend its margin."""
    return json.dumps({"engine": arm.engine, "settings": dict(sorted(arm.settings.items()))}, sort_keys=True)
