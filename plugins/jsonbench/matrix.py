"""The benchmark matrix: loading ``include/matrix.yaml``, the DAG's Params schema, and run planning.

A run is described by a :class:`RunConfig`: the matrix narrowed and overridden by the run's
parameters. :func:`resolve` validates parameters *before* any engine starts and raises
:class:`~jsonbench.errors.ConfigError` naming the offending field. :func:`plan_cells` turns a
config into typed :class:`~jsonbench.cell.Cell` values, one per (suite, engine), in the order the
host runs them (one engine at a time); :func:`cell_slots` lists every cell the matrix *could* run,
which is what the DAG file turns into one task group each at parse time.
"""

from __future__ import annotations

import dataclasses
import difflib
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
from jsonbench.errors import BenchmarkError, ConfigError

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
    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else "(syntax)"
        problem = getattr(exc, "problem", None) or str(exc)
        raise MatrixFileError(path, where, f"not valid YAML: {problem}") from None
    except OSError as exc:
        raise MatrixFileError(path, "(file)", f"cannot be read: {exc.strerror or exc}") from None
    matrix = Matrix(raw)
    _check_matrix(matrix, path)
    return matrix


def load_matrix(path: Path | None = None) -> Matrix:
    """Read and check the matrix file (cached; cheap enough for DAG parse time: no I/O beyond the file)."""
    return _load(str(path or paths.matrix_file()))


class MatrixFileError(ConfigError):
    """The matrix file is wrong: ``path`` is the file, ``field`` the YAML path of the bad entry (``matrix.scales.smoke.rows``)."""

    def __init__(self, path: str | Path, field: str, message: str) -> None:
        BenchmarkError.__init__(self, f"matrix file {path}: {field}: {message}")
        self.path, self.field = str(path), field


_TOP_LEVEL = (
    "hardware_label",
    "families",
    "engines",
    "default_engines",
    "default_backend",
    "suites",
    "default_suites",
    "scales",
    "default_scale",
    "server_settings",
    "suite_settings",
    "initdb",
    "quiet_window",
    "memory_caps",
)
_SCALAR = (str, int, float, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class _FileCheck:
    """The matrix file's name for the error messages, and the two checks every section of it uses."""

    where: str

    def need(self, ok: bool, field: str, message: str) -> None:
        if not ok:
            raise MatrixFileError(self.where, field, message)

    def mapping(self, value: Any, field: str, what: str = "a mapping") -> dict[str, Any]:
        self.need(isinstance(value, dict), field, f"must be {what}, got {type(value).__name__}")
        return dict(value)


def _check_matrix(m: Matrix, path: str | Path | None = None) -> None:
    """Catch mistakes in the matrix file itself, naming the file and the YAML path of the bad entry.

    Runs when the matrix is loaded (DAG parse, the CLI, the plan task), so a malformed file fails
    before any engine starts. Sections are checked after the ones they refer to (families before
    engines and suites; engines, suites and scales before the defaults and settings), so a check can
    look up what an entry names.
    """
    c = _FileCheck(str(path or paths.matrix_file()))
    raw = c.mapping(m.raw, "matrix", "a mapping of top-level keys")
    _check_top_level(c, raw)
    families = _check_families(c, raw)
    engines = _check_engines(c, raw, families)
    suites = c.mapping(raw["suites"], "matrix.suites")
    scales = c.mapping(raw["scales"], "matrix.scales")
    _check_suites(c, suites, families, scales)
    _check_scales(c, scales, suites)
    _check_defaults(c, raw, engines, suites, scales)
    _check_settings(c, raw, suites)
    _check_shares(c, raw)


def _check_top_level(c: _FileCheck, raw: dict[str, Any]) -> None:
    """The required top-level keys are there, and no key is a misspelling of a known one."""
    for key in ("families", "engines", "suites", "scales", "default_engines", "default_suites", "default_scale"):
        c.need(key in raw, f"matrix.{key}", f"missing from {c.where}")
    for key in raw:
        close = difflib.get_close_matches(str(key), _TOP_LEVEL, n=1, cutoff=0.8)
        c.need(key in _TOP_LEVEL or not close, f"matrix.{key}", f"unknown key; did you mean {close[0] if close else ''!r}?")


def _check_families(c: _FileCheck, raw: dict[str, Any]) -> dict[str, Any]:
    """``families``: each maps its backends to an adapter ``module:Class``."""
    families = c.mapping(raw["families"], "matrix.families")
    for fname, fam in families.items():
        backends = fam.get("backends") if isinstance(fam, dict) else None
        c.need(
            isinstance(backends, dict) and bool(backends),
            f"matrix.families.{fname}.backends",
            "must map each backend to its adapter (module:Class)",
        )
        assert isinstance(backends, dict)  # need() raised otherwise
        for bname, target in backends.items():
            c.need(
                isinstance(target, str) and ":" in target,
                f"matrix.families.{fname}.backends.{bname}",
                f"must be an import path 'module:Class', got {target!r}",
            )
    return families


def _check_engines(c: _FileCheck, raw: dict[str, Any], families: dict[str, Any]) -> dict[str, Any]:
    """``engines``: a declared family, a version, and options only for backends the family has an adapter for."""
    engines = c.mapping(raw["engines"], "matrix.engines")
    for eid, eng in engines.items():
        eng = c.mapping(eng, f"matrix.engines.{eid}")
        for k in ("family", "version", "backends"):
            c.need(k in eng, f"matrix.engines.{eid}.{k}", "missing")
        c.need(eng["family"] in families, f"matrix.engines.{eid}.family", f"{eng['family']!r} is not declared under families")
        c.need(
            isinstance(eng["version"], (str, int, float)) and not isinstance(eng["version"], bool),
            f"matrix.engines.{eid}.version",
            f"must be a version like 17 or 3.46.1, got {eng['version']!r}",
        )
        for bname, options in c.mapping(eng["backends"], f"matrix.engines.{eid}.backends").items():
            c.need(
                bname in families[eng["family"]]["backends"],
                f"matrix.engines.{eid}.backends.{bname}",
                f"family {eng['family']!r} has no adapter for backend {bname!r}",
            )
            c.need(
                options is None or isinstance(options, dict),
                f"matrix.engines.{eid}.backends.{bname}",
                f"must be a mapping of options, got {options!r}",
            )
    return engines


def _check_suites(c: _FileCheck, suites: dict[str, Any], families: dict[str, Any], scales: dict[str, Any]) -> None:
    """``suites``: a declared family, a module, and parameters in every scale."""
    for sname, suite in suites.items():
        suite = c.mapping(suite, f"matrix.suites.{sname}")
        for k in ("family", "module"):
            c.need(k in suite, f"matrix.suites.{sname}.{k}", "missing")
        c.need(suite["family"] in families, f"matrix.suites.{sname}.family", f"{suite['family']!r} is not declared under families")
        c.need(
            isinstance(suite["module"], str) and bool(suite["module"]),
            f"matrix.suites.{sname}.module",
            f"must be a module name, got {suite['module']!r}",
        )
        for scale_name, scale in scales.items():
            c.need(isinstance(scale, dict) and sname in scale, f"matrix.scales.{scale_name}.{sname}", "no parameters for this suite")


def _check_scales(c: _FileCheck, scales: dict[str, Any], suites: dict[str, Any]) -> None:
    """``scales``: repetitions, a statement timeout, and scalar parameters for every suite."""
    for scale_name, scale in scales.items():
        reps = scale.get("repetitions")
        c.need(
            isinstance(reps, int) and not isinstance(reps, bool) and reps >= 1,
            f"matrix.scales.{scale_name}.repetitions",
            f"must be an integer >= 1, got {reps!r}",
        )
        timeout = scale.get("statement_timeout_s", 0)
        c.need(
            isinstance(timeout, int) and not isinstance(timeout, bool) and timeout >= 0,
            f"matrix.scales.{scale_name}.statement_timeout_s",
            f"must be a whole number of seconds >= 0, got {timeout!r}",
        )
        for sname in suites:
            for k, v in c.mapping(scale[sname], f"matrix.scales.{scale_name}.{sname}").items():
                c.need(
                    isinstance(v, _SCALAR) or v is None,
                    f"matrix.scales.{scale_name}.{sname}.{k}",
                    f"must be a number, string or boolean, got {v!r}",
                )


def _check_defaults(c: _FileCheck, raw: dict[str, Any], engines: dict[str, Any], suites: dict[str, Any], scales: dict[str, Any]) -> None:
    """The defaults name declared engines, suites, a scale and a backend; the hardware label is a valid label."""
    for key, known in (("default_engines", engines), ("default_suites", suites)):
        value = raw[key]
        c.need(isinstance(value, list) and bool(value), f"matrix.{key}", f"must be a non-empty list, got {value!r}")
        for i, name in enumerate(value):
            c.need(name in known, f"matrix.{key}[{i}]", f"{name!r} is not declared under {key.removeprefix('default_')}")
    c.need(raw["default_scale"] in scales, "matrix.default_scale", f"{raw['default_scale']!r} is not one of the scales {list(scales)}")
    if "default_backend" in raw:
        c.need(raw["default_backend"] in BACKENDS, "matrix.default_backend", f"{raw['default_backend']!r} is not one of {list(BACKENDS)}")
    if "hardware_label" in raw:
        c.need(
            isinstance(raw["hardware_label"], str) and bool(_LABEL_RE.match(raw["hardware_label"])),
            "matrix.hardware_label",
            f"{raw['hardware_label']!r} must match {_LABEL_RE.pattern}",
        )


def _check_settings(c: _FileCheck, raw: dict[str, Any], suites: dict[str, Any]) -> None:
    """``server_settings``, ``suite_settings`` (of declared suites) and ``initdb``: valid names with scalar values."""
    for name, value in c.mapping(raw.get("server_settings") or {}, "matrix.server_settings").items():
        c.need(bool(_SETTING_NAME_RE.match(str(name))), f"matrix.server_settings.{name}", "not a valid setting name")
        c.need(isinstance(value, _SCALAR), f"matrix.server_settings.{name}", f"value must be a string or number, got {value!r}")
    for sname, settings in c.mapping(raw.get("suite_settings") or {}, "matrix.suite_settings").items():
        c.need(sname in suites, f"matrix.suite_settings.{sname}", "not a suite declared under suites")
        for name, value in c.mapping(settings or {}, f"matrix.suite_settings.{sname}").items():
            c.need(
                bool(_SETTING_NAME_RE.match(str(name))) and isinstance(value, _SCALAR),
                f"matrix.suite_settings.{sname}.{name}",
                f"must be a valid setting name with a string or number value, got {value!r}",
            )
    initdb = c.mapping(raw.get("initdb") or {}, "matrix.initdb")
    c.need(
        isinstance(initdb.get("data_checksums", True), bool),
        "matrix.initdb.data_checksums",
        f"must be true or false, got {initdb.get('data_checksums')!r}",
    )


def _check_shares(c: _FileCheck, raw: dict[str, Any]) -> None:
    """``quiet_window`` and ``memory_caps``: known keys, each a share of the machine between 0 and 1."""
    known_quiet = {f.name for f in dataclasses.fields(QuietPolicy)}
    for key, value in c.mapping(raw.get("quiet_window") or {}, "matrix.quiet_window").items():
        c.need(key in known_quiet, f"matrix.quiet_window.{key}", f"unknown key (known: {sorted(known_quiet)})")
        c.need(_is_number(value) and 0 <= value <= 1, f"matrix.quiet_window.{key}", f"must be a share between 0 and 1, got {value!r}")
    for key, value in c.mapping(raw.get("memory_caps") or {}, "matrix.memory_caps").items():
        c.need(
            _is_number(value) and 0 < value <= 1,
            f"matrix.memory_caps.{key}",
            f"must be a share of the machine's memory in (0, 1], got {value!r}",
        )


def params_schema(matrix: Matrix | None = None, hardware_label: str | None = None) -> dict[str, dict[str, Any]]:
    """Keyword arguments for one ``airflow.sdk.Param`` per run parameter.

    Returned as plain dicts (``{"default": ..., "type": ..., ...}``) so this module does not
    import Airflow; the DAG file wraps each in ``Param(**kwargs)``. The trigger form renders
    them from this JSON schema and Airflow rejects a run whose params do not match it. A DAG bound
    to one hardware label (its tasks go to that host's queue) passes ``hardware_label``: the
    parameter then defaults to that label and accepts no other.

    One function on purpose: it returns one literal, the schema, an entry per parameter in the order
    the DAG declares them.
    """
    m = matrix or load_matrix()
    label_param: dict[str, Any] = {
        "default": None,
        "type": ["null", "string"],
        "pattern": _LABEL_RE.pattern,
        "title": "Hardware label",
        "description": "Names the machine in results and drift history. Empty: $JSONBENCH_HARDWARE_LABEL or the matrix default.",
    }
    if hardware_label:
        label_param = {
            "default": hardware_label,
            "type": "string",
            "enum": [hardware_label],
            "title": "Hardware label",
            "description": f"This DAG measures the host labelled {hardware_label!r} (its tasks go to that host's queue).",
        }
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


def resolve(
    params: dict[str, Any] | None, matrix: Matrix | None = None, env: dict[str, str] | None = None, bound_label: str | None = None
) -> RunConfig:
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

    engines, suites = _engines_and_suites(p, m)
    backend = _backend(p, m, env, engines)

    scale = p.get("scale") or m.raw["default_scale"]
    if scale not in m.scales:
        raise ConfigError("scale", f"unknown scale {scale!r}; known: {', '.join(m.scales)}")

    reps = p.get("repetitions")
    if reps is None:
        reps = m.scales[scale]["repetitions"]
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise ConfigError("repetitions", f"must be an integer >= 1, got {reps!r}")

    label = _hardware_label(p, m, env, bound_label)
    settings = _server_settings(p)

    wanted_families = {m.suites[s]["family"] for s in suites}
    have_families = {m.engines[e]["family"] for e in engines}
    if not wanted_families & have_families:
        raise ConfigError(
            "suites",
            f"no selected engine can run the selected suites (suite families: {sorted(wanted_families)}, engine families: {sorted(have_families)})",
        )

    results = str(paths.results_dir(p.get("results_dir")))
    return RunConfig(
        engines=tuple(engines),
        suites=tuple(suites),
        backend=backend,
        scale=scale,
        repetitions=reps,
        hardware_label=label,
        results_dir=results,
        server_settings={k: str(v) for k, v in settings.items()},
    )


def _engines_and_suites(p: dict[str, Any], m: Matrix) -> tuple[list[str], list[str]]:
    """The run's engines and suites (the matrix's defaults unless given), each declared in the matrix."""
    engines = _string_list(_given(p, "engines", m.raw["default_engines"]), "engines")
    for eid in engines:
        if eid not in m.engines:
            raise ConfigError("engines", f"unknown engine {eid!r}; known: {', '.join(sorted(m.engines))}")
    suites = _string_list(_given(p, "suites", m.raw["default_suites"]), "suites")
    for s in suites:
        if s not in m.suites:
            raise ConfigError("suites", f"unknown suite {s!r}; known: {', '.join(sorted(m.suites))}")
    return engines, suites


def _backend(p: dict[str, Any], m: Matrix, env: dict[str, str], engines: list[str]) -> str:
    """The run's backend (parameter, ``$JSONBENCH_BACKEND``, the matrix's default), which every engine must have a build for."""
    backend = p.get("backend") or env.get("JSONBENCH_BACKEND") or m.raw.get("default_backend", "embedded")
    if backend not in BACKENDS:
        raise ConfigError("backend", f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    for eid in engines:
        if m.backend_for(eid, backend) not in m.engines[eid]["backends"]:
            raise ConfigError("backend", f"engine {eid!r} has no {backend!r} build in the matrix")
    return backend


def _hardware_label(p: dict[str, Any], m: Matrix, env: dict[str, str], bound_label: str | None) -> str:
    """The run's hardware label (parameter, the DAG's bound label, ``$JSONBENCH_HARDWARE_LABEL``, the matrix's, ``local``)."""
    label = p.get("hardware_label") or bound_label or env.get("JSONBENCH_HARDWARE_LABEL") or m.raw.get("hardware_label", "local")
    if not _LABEL_RE.match(str(label)):
        raise ConfigError("hardware_label", f"{label!r} must match {_LABEL_RE.pattern}")
    if bound_label and label != bound_label:
        raise ConfigError("hardware_label", f"this DAG measures the host labelled {bound_label!r}; trigger the DAG of {label!r} instead")
    return str(label)


def _server_settings(p: dict[str, Any]) -> dict[str, Any]:
    """The run's extra server settings: valid setting names with finite string or number values."""
    settings = p.get("server_settings") or {}
    if not isinstance(settings, dict):
        raise ConfigError("server_settings", "must be an object of setting name to value")
    for name, value in settings.items():
        if not _SETTING_NAME_RE.match(str(name)):
            raise ConfigError(f"server_settings.{name}", "not a valid setting name")
        if not isinstance(value, (str, int, float)) or isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value)):
            raise ConfigError(f"server_settings.{name}", f"value must be a string or number, got {value!r}")
    return settings


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


def cell_slots(matrix: Matrix | None = None, engines: list[str] | None = None) -> list[tuple[str, str]]:
    """Every ``(suite, engine)`` the matrix can run, in the order a run takes them.

    The DAG file makes one task group per slot at parse time and chains them, so that one engine
    at a time runs on the host; a run's parameters select a subset, and the others are skipped.
    Suites in matrix order, and within a suite its engines in matrix order (so a suite's versions
    are measured back to back, close in time). ``engines`` keeps only those engines (the host's,
    :func:`jsonbench.deployment.host_engines`); an id the matrix does not declare is an error.
    """
    m = matrix or load_matrix()
    unknown = sorted(set(engines or []) - set(m.engines))
    if unknown:
        raise ConfigError("JSONBENCH_HOST_ENGINES", f"unknown engine(s) {unknown} (the matrix declares: {', '.join(m.engines)})")
    return [
        (suite, eid)
        for suite, spec in m.suites.items()
        for eid, eng in m.engines.items()
        if eng["family"] == spec["family"] and (engines is None or eid in engines)
    ]


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
