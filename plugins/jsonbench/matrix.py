"""The benchmark matrix: loading ``include/matrix.yaml``, the DAG's Params schema, and run planning.

A run is described by a :class:`RunConfig`: the matrix narrowed and overridden by the run's
parameters. :func:`resolve` validates parameters *before* any engine starts and raises
:class:`~jsonbench.errors.ConfigError` naming the offending field. :func:`plan_cells` turns a
config into typed :class:`~jsonbench.cell.Cell` values, one per (suite, engine), in the order the
host runs them (one engine at a time); :func:`cell_slots` lists every cell the matrix *could* run,
which is what the DAG file turns into one task group each at parse time.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from jsonbench import paths
from jsonbench.cell import Cell, PostgresOptions, QuietPolicy, RunRef, cell_id_of
from jsonbench.errors import ConfigError

BACKENDS = ("embedded", "docker", "server")
_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_SETTING_NAME_RE = re.compile(r"^[a-z_][a-z0-9_.]*$")


@dataclass(frozen=True)
class Matrix:
    """The parsed matrix file."""

    raw: dict[str, Any]

    @property
    def engines(self) -> dict[str, dict[str, Any]]:
        return self.raw["engines"]

    @property
    def families(self) -> dict[str, dict[str, Any]]:
        return self.raw["families"]

    def backend_for(self, engine_id: str, backend: str) -> str:
        """The backend an engine runs on when the run asks for ``backend`` (see ``families`` in the matrix)."""
        backends = list(self.families[self.engines[engine_id]["family"]]["backends"])
        return backend if backend in backends else backends[0]

    def adapter_for(self, family: str, backend: str) -> str:
        """The adapter (``module:Class``) registered for a family's backend."""
        return str(self.families[family]["backends"][backend])

    @property
    def suites(self) -> dict[str, dict[str, Any]]:
        return self.raw["suites"]

    @property
    def scales(self) -> dict[str, dict[str, Any]]:
        return self.raw["scales"]


@lru_cache(maxsize=4)
def _load(path: str) -> Matrix:
    with open(path, encoding="utf-8") as fh:
        raw = yaml.safe_load(fh)
    matrix = Matrix(raw)
    _check_matrix(matrix)
    return matrix


def load_matrix(path: Path | None = None) -> Matrix:
    """Read and check the matrix file (cached; cheap enough for DAG parse time: no I/O beyond the file)."""
    return _load(str(path or paths.matrix_file()))


def _check_matrix(m: Matrix) -> None:
    """Catch mistakes in the matrix file itself, with the YAML path of the bad entry."""
    for key in ("families", "engines", "suites", "scales", "default_engines", "default_suites", "default_scale"):
        if key not in m.raw:
            raise ConfigError(f"matrix.{key}", "missing from include/matrix.yaml")
    for fname, fam in m.families.items():
        backends = fam.get("backends") if isinstance(fam, dict) else None
        if not isinstance(backends, dict) or not backends:
            raise ConfigError(f"matrix.families.{fname}.backends", "must map each backend to its adapter (module:Class)")
        for bname, target in backends.items():
            if not isinstance(target, str) or ":" not in target:
                raise ConfigError(f"matrix.families.{fname}.backends.{bname}", f"must be an import path 'module:Class', got {target!r}")
    for eid, eng in m.engines.items():
        for k in ("family", "version", "backends"):
            if k not in eng:
                raise ConfigError(f"matrix.engines.{eid}.{k}", "missing")
        if eng["family"] not in m.families:
            raise ConfigError(f"matrix.engines.{eid}.family", f"{eng['family']!r} is not declared under families")
        for bname in eng["backends"]:
            if bname not in m.families[eng["family"]]["backends"]:
                raise ConfigError(f"matrix.engines.{eid}.backends.{bname}", f"family {eng['family']!r} has no adapter for backend {bname!r}")
    for sname, suite in m.suites.items():
        for k in ("family", "module"):
            if k not in suite:
                raise ConfigError(f"matrix.suites.{sname}.{k}", "missing")
        if suite["family"] not in m.families:
            raise ConfigError(f"matrix.suites.{sname}.family", f"{suite['family']!r} is not declared under families")
        for scale_name, scale in m.scales.items():
            if sname not in scale:
                raise ConfigError(f"matrix.scales.{scale_name}.{sname}", "no parameters for this suite")
    for scale_name, scale in m.scales.items():
        reps = scale.get("repetitions")
        if not isinstance(reps, int) or reps < 1:
            raise ConfigError(f"matrix.scales.{scale_name}.repetitions", "must be an integer >= 1")


def params_schema(matrix: Matrix | None = None, hardware_label: str | None = None) -> dict[str, dict[str, Any]]:
    """Keyword arguments for one ``airflow.sdk.Param`` per run parameter.

    Returned as plain dicts (``{"default": ..., "type": ..., ...}``) so this module does not
    import Airflow; the DAG file wraps each in ``Param(**kwargs)``. The trigger form renders
    them from this JSON schema and Airflow rejects a run whose params do not match it. A DAG bound
    to one hardware label (its tasks go to that host's queue) passes ``hardware_label``: the
    parameter then defaults to that label and accepts no other.
    """
    m = matrix or load_matrix()
    label_param: dict[str, Any] = {
        "default": None,
        "type": ["null", "string"],
        "pattern": _LABEL_RE.pattern,
        "title": "Hardware label",
        "description": "Names the machine in results and drift history. Empty: "
        "$JSONBENCH_HARDWARE_LABEL or the matrix default.",
    }
    if hardware_label:
        label_param = {"default": hardware_label, "type": "string", "enum": [hardware_label], "title": "Hardware label",
                       "description": f"This DAG measures the host labelled {hardware_label!r} (its tasks go to that host's queue)."}
    return {
        "engines": {
            "default": list(m.raw["default_engines"]),
            "type": "array",
            "items": {"type": "string", "enum": sorted(m.engines)},
            "minItems": 1,
            "uniqueItems": True,
            "title": "Engines",
            "description": "Engine versions to benchmark (from include/matrix.yaml).",
        },
        "suites": {
            "default": list(m.raw["default_suites"]),
            "type": "array",
            "items": {"type": "string", "enum": sorted(m.suites)},
            "minItems": 1,
            "uniqueItems": True,
            "title": "Suites",
            "description": "Benchmark suites to run; each runs on every selected engine of its family.",
        },
        "backend": {
            "default": os.environ.get("JSONBENCH_BACKEND") or m.raw.get("default_backend", "embedded"),
            "type": "string",
            "enum": list(BACKENDS),
            "title": "PostgreSQL backend",
            "description": "embedded: local builds fetched by the setup; docker: official images; "
            "server: an existing server reached through an Airflow connection.",
        },
        "scale": {
            "default": m.raw["default_scale"],
            "type": "string",
            "enum": list(m.scales),
            "title": "Scale profile",
            "description": "smoke (tests), laptop (minutes), full (the seeds' own scale).",
        },
        "repetitions": {
            "default": None,
            "type": ["null", "integer"],
            "minimum": 1,
            "title": "Repetitions",
            "description": "Override the scale profile's repetitions (>= 1). Empty: the profile's.",
        },
        "hardware_label": label_param,
        "results_dir": {
            "default": None,
            "type": ["null", "string"],
            "title": "Results folder",
            "description": "Root of the Parquet dataset. Empty: $JSONBENCH_RESULTS_DIR or results/.",
        },
        "server_settings": {
            "default": {},
            "type": "object",
            "additionalProperties": {"type": ["string", "number"]},
            "title": "Server settings",
            "description": 'Extra PostgreSQL settings, e.g. {"shared_buffers": "256MB"}.',
        },
    }


@dataclass(frozen=True)
class RunConfig:
    """A validated run: which cells, at which scale, with which settings."""

    engines: tuple[str, ...]
    suites: tuple[str, ...]
    backend: str
    scale: str
    repetitions: int
    hardware_label: str
    results_dir: str
    server_settings: dict[str, str] = field(default_factory=dict)


def resolve(params: dict[str, Any] | None, matrix: Matrix | None = None, env: dict[str, str] | None = None, bound_label: str | None = None) -> RunConfig:
    """Validate run parameters against the matrix; raise ``ConfigError(field, ...)`` on the first bad one.

    Airflow's JSON-schema validation already rejects most bad values at trigger time; this
    repeats the checks (the command line and tests do not go through the trigger form) and adds
    the ones a schema cannot express, such as an engine that has no build for the chosen backend.
    """
    m = matrix or load_matrix()
    p = dict(params or {})
    env = dict(os.environ if env is None else env)
    known = set(params_schema(m))
    unknown = sorted(set(p) - known)
    if unknown:
        raise ConfigError(unknown[0], f"unknown parameter (known: {', '.join(sorted(known))})")

    engines = _string_list(_given(p, "engines", m.raw["default_engines"]), "engines")
    for eid in engines:
        if eid not in m.engines:
            raise ConfigError("engines", f"unknown engine {eid!r}; known: {', '.join(sorted(m.engines))}")
    suites = _string_list(_given(p, "suites", m.raw["default_suites"]), "suites")
    for s in suites:
        if s not in m.suites:
            raise ConfigError("suites", f"unknown suite {s!r}; known: {', '.join(sorted(m.suites))}")

    backend = p.get("backend") or env.get("JSONBENCH_BACKEND") or m.raw.get("default_backend", "embedded")
    if backend not in BACKENDS:
        raise ConfigError("backend", f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    for eid in engines:
        if m.backend_for(eid, backend) not in m.engines[eid]["backends"]:
            raise ConfigError("backend", f"engine {eid!r} has no {backend!r} build in the matrix")

    scale = p.get("scale") or m.raw["default_scale"]
    if scale not in m.scales:
        raise ConfigError("scale", f"unknown scale {scale!r}; known: {', '.join(m.scales)}")

    reps = p.get("repetitions")
    if reps is None:
        reps = m.scales[scale]["repetitions"]
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise ConfigError("repetitions", f"must be an integer >= 1, got {reps!r}")

    label = p.get("hardware_label") or bound_label or env.get("JSONBENCH_HARDWARE_LABEL") or m.raw.get("hardware_label", "local")
    if not _LABEL_RE.match(str(label)):
        raise ConfigError("hardware_label", f"{label!r} must match {_LABEL_RE.pattern}")
    if bound_label and label != bound_label:
        raise ConfigError("hardware_label", f"this DAG measures the host labelled {bound_label!r}; trigger the DAG of {label!r} instead")

    settings = p.get("server_settings") or {}
    if not isinstance(settings, dict):
        raise ConfigError("server_settings", "must be an object of setting name to value")
    for name, value in settings.items():
        if not _SETTING_NAME_RE.match(str(name)):
            raise ConfigError(f"server_settings.{name}", "not a valid setting name")
        if not isinstance(value, (str, int, float)) or isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value)):
            raise ConfigError(f"server_settings.{name}", f"value must be a string or number, got {value!r}")

    wanted_families = {m.suites[s]["family"] for s in suites}
    have_families = {m.engines[e]["family"] for e in engines}
    if not wanted_families & have_families:
        raise ConfigError("suites", f"no selected engine can run the selected suites (suite families: {sorted(wanted_families)}, engine families: {sorted(have_families)})")

    results = str(paths.results_dir(p.get("results_dir")))
    return RunConfig(
        engines=tuple(engines),
        suites=tuple(suites),
        backend=backend,
        scale=scale,
        repetitions=reps,
        hardware_label=str(label),
        results_dir=results,
        server_settings={k: str(v) for k, v in settings.items()},
    )


def _given(params: dict[str, Any], name: str, default: Any) -> Any:
    """The parameter's value when given (an empty list counts as given, and is refused later), else the default."""
    value = params.get(name)
    return default if value is None else value


def _string_list(value: Any, name: str) -> list[str]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(name, f"must be a non-empty list of names, got {value!r}")
    if len(set(value)) != len(value):
        raise ConfigError(name, f"lists a name twice: {value!r}")
    return list(value)


def cell_slots(matrix: Matrix | None = None) -> list[tuple[str, str]]:
    """Every ``(suite, engine)`` the matrix can run, in the order a run takes them.

    The DAG file makes one task group per slot at parse time and chains them, so that one engine
    at a time runs on the host; a run's parameters select a subset, and the others are skipped.
    Suites in matrix order, and within a suite its engines in matrix order (so a suite's versions
    are measured back to back, close in time).
    """
    m = matrix or load_matrix()
    return [(suite, eid) for suite, spec in m.suites.items() for eid, eng in m.engines.items() if eng["family"] == spec["family"]]


def plan_cells(cfg: RunConfig, run: RunRef, matrix: Matrix | None = None) -> list[Cell]:
    """The run's cells, one per selected (suite, engine of the suite's family), in the host's order."""
    m = matrix or load_matrix()
    quiet = QuietPolicy(**(m.raw.get("quiet_window") or {}))
    scale = m.scales[cfg.scale]
    cells: list[Cell] = []
    for position, (suite, eid) in enumerate(cell_slots(m)):
        if suite not in cfg.suites or eid not in cfg.engines:
            continue
        eng = m.engines[eid]
        family = eng["family"]
        backend = m.backend_for(eid, cfg.backend)
        postgres = None
        if m.families[family].get("server_settings"):
            settings: dict[str, str] = {}
            settings.update({str(k): str(v) for k, v in (m.raw.get("server_settings") or {}).items()})
            settings.update({str(k): str(v) for k, v in ((m.raw.get("suite_settings") or {}).get(suite) or {}).items()})
            settings.update(cfg.server_settings)
            postgres = PostgresOptions(
                server_settings=settings,
                memory_caps={str(k): float(v) for k, v in (m.raw.get("memory_caps") or {}).items()},
                data_checksums=bool((m.raw.get("initdb") or {}).get("data_checksums", True)),
                statement_timeout_s=int(scale.get("statement_timeout_s", 0) or 0),
            )
        cells.append(
            Cell(
                cell_id=cell_id_of(suite, eid),
                suite=suite,
                engine_id=eid,
                family=family,
                version=str(eng["version"]),
                backend=backend,
                adapter=m.adapter_for(family, backend),
                backend_options=dict(eng["backends"].get(backend) or {}),
                scale=cfg.scale,
                scale_params=dict(scale[suite]),
                repetitions=cfg.repetitions,
                run=run,
                quiet=quiet,
                postgres=postgres,
                position=position,
            )
        )
    return cells
