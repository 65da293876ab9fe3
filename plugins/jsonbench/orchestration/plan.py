"""The run plan: a run's parameters checked against the matrix, and the cells they select.

A run is described by a :class:`RunConfig`: the matrix narrowed and overridden by the run's
parameters. :func:`resolve` validates parameters *before* any engine starts and raises
:class:`~jsonbench.errors.ConfigError` naming the offending field. :func:`plan_cells` turns a
config into typed :class:`~jsonbench.cell.Cell` values, one per (suite, engine), in the order the
host runs them (one engine at a time); :func:`cell_slots` lists every cell the matrix *could* run,
which is what the DAG file turns into one task group each at parse time. :func:`params_schema` is
the DAG's trigger form. The matrix file itself is read and checked by :mod:`jsonbench.matrix`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonbench import paths
from jsonbench.cell import MAX_STARTS, Cell, PostgresOptions, QuietPolicy, RunRef, cell_id_of
from jsonbench.errors import ConfigError
from jsonbench.matrix import LABEL_RE, SETTING_NAME_RE, Matrix, load_matrix


def _some_of(default: Iterable[str], choices: Iterable[str], title: str, description: str) -> dict[str, Any]:
    """A parameter that picks one or more of ``choices``, each at most once (the engines, the suites)."""
    return {
        "default": list(default),
        "type": "array",
        "items": {"type": "string", "enum": sorted(choices)},
        "minItems": 1,
        "uniqueItems": True,
        "title": title,
        "description": description,
    }


def params_schema(matrix: Matrix | None = None, hardware_label: str | None = None) -> dict[str, dict[str, Any]]:
    """Keyword arguments for one ``airflow.sdk.Param`` per run parameter.

    Returned as plain dicts (``{"default": ..., "type": ..., ...}``) so this module does not
    import Airflow; the DAG file wraps each in ``Param(**kwargs)``. The trigger form renders
    them from this JSON schema and Airflow rejects a run whose params do not match it. A DAG bound
    to one hardware label (its tasks go to that host's queue) passes ``hardware_label``: the
    parameter then defaults to that label and accepts no other.

    One function on purpose: it returns one literal, the schema, an entry per parameter in the order
    the DAG declares them (the two pick-several parameters share their shape through :func:`_some_of`).
    """
    m = matrix or load_matrix()
    label_param: dict[str, Any] = {
        "default": None,
        "type": ["null", "string"],
        "pattern": LABEL_RE.pattern,
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
        "engines": _some_of(m.raw["default_engines"], m.engines, "Engines", "Engine versions to benchmark (from include/matrix.yaml)."),
        "suites": _some_of(
            default_suites(m, os.environ),
            m.suites,
            "Suites",
            "Benchmark suites to run; each runs on every selected engine of its family. "
            "Default: $JSONBENCH_SUITES, else the matrix's default_suites.",
        ),
        "backend": {
            "default": os.environ.get("JSONBENCH_BACKEND") or m.raw.get("default_backend", "embedded"),
            "type": "string",
            "enum": list(m.backends),
            "title": "PostgreSQL backend",
            "description": "embedded: local builds fetched by the setup; docker: official images; "
            "server: an existing server reached through an Airflow connection.",
        },
        "scale": {
            "default": m.raw["default_scale"],
            "type": "string",
            "enum": list(m.scales),
            "title": "Scale profile",
            "description": ", ".join(f"{name} ({spec.get('description', '')})" for name, spec in m.scales.items()) + ".",
        },
        "repetitions": {
            "default": None,
            "type": ["null", "integer"],
            "minimum": 1,
            "title": "Repetitions",
            "description": "Override the scale profile's repetitions (>= 1). Empty: the profile's.",
        },
        "starts": {
            "default": None,
            "type": ["null", "integer"],
            "minimum": 1,
            "maximum": MAX_STARTS,
            "title": "Engine starts per cell",
            "description": (
                "On how many engine starts each cell's timings rest: each workload runs once per start, a server restart between, "
                "its repetitions split across them (most of a night's noise enters between engine starts). Empty: the scale "
                "profile's (include/matrix.yaml); engines that cannot restart (an existing server, SQLite) take one."
            ),
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
        "documents": {
            "default": None,
            "type": ["null", "string"],
            "title": "Documents",
            "description": (
                "Your documents, for the suite documents: a .jsonl file (one JSON object per line) or a folder of .json files, "
                "on the machine that runs the tasks. Read and checked before any engine starts. Empty: $JSONBENCH_DOCUMENTS, "
                "else the shipped sample examples/orders.jsonl."
            ),
        },
        "read_keys": {
            "default": None,
            "type": ["null", "array"],
            "items": {"type": "string", "minLength": 1},
            "title": "Keys to read",
            "description": (
                "Key paths the documents suite reads (status, shipping.city). Empty: $JSONBENCH_READ_KEYS, else the most common "
                "top-level scalar keys."
            ),
        },
        "update_keys": {
            "default": None,
            "type": ["null", "array"],
            "items": {"type": "string", "minLength": 1},
            "title": "Keys to update",
            "description": (
                "Key paths the documents suite updates. Empty: $JSONBENCH_UPDATE_KEYS, else the most common top-level scalar key "
                "that is not an identifier."
            ),
        },
        "resume_of": {
            "default": None,
            "type": ["null", "string"],
            "pattern": RUN_ID_RE.pattern,
            "title": "Resume run",
            "description": (
                "Run id of an earlier run of this DAG to finish (the command line's --resume sets it): the cells it completed are "
                "kept, the rest are measured, and everything is published under that run id. Empty: a new run. Under the "
                "scheduler, clear the run's failed tasks instead."
            ),
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
    #: On how many engine starts each cell's timed figures rest (``starts``; :func:`jsonbench.suites.base.start_rounds`).
    starts: int = 1
    server_settings: dict[str, str] = field(default_factory=dict)
    #: The run this one finishes (``resume_of``): its staged cells are kept and its run id is the one published.
    resume_of: str | None = None
    #: What a suite that reads an input (``input:`` in the matrix) adds to its cells' scale parameters: the
    #: documents' fingerprint, keys and twin (:meth:`jsonbench.suites.documents.plan.DocumentsPlan.to_params`).
    suite_inputs: dict[str, dict[str, Any]] = field(default_factory=dict)


#: What a run id this project resumes looks like (Airflow's ``<run type>__<timestamp>`` ids, and tests' plain names).
RUN_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_:.+-]{0,249}$")


def _resume_of(value: Any, results_dir: str) -> str | None:
    """``resume_of`` checked: a run id with a staged attempt under the results folder (else ``ConfigError``)."""
    if value in (None, ""):
        return None
    if not isinstance(value, str) or not RUN_ID_RE.match(value):
        raise ConfigError("resume_of", f"must be a run id such as manual__2026-11-30T08:00:00+00:00, got {value!r}")
    from jsonbench.dataset.staging import Staging

    if Staging(results_dir, value).read_params() is None:
        raise ConfigError("resume_of", f"no staged attempt of {value} under {results_dir}; nothing to resume")
    return value


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

    engines, suites = _engines_and_suites(p, m, env)
    backend = _backend(p, m, env, engines)

    scale = p.get("scale") or m.raw["default_scale"]
    if scale not in m.scales:
        raise ConfigError("scale", f"unknown scale {scale!r}; known: {', '.join(m.scales)}")

    reps = p.get("repetitions")
    if reps is None:
        reps = m.scales[scale]["repetitions"]
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise ConfigError("repetitions", f"must be an integer >= 1, got {reps!r}")
    starts = p.get("starts")
    if starts is None:
        starts = m.scales[scale].get("starts", 1)
    if isinstance(starts, bool) or not isinstance(starts, int) or not 1 <= starts <= MAX_STARTS:
        raise ConfigError("starts", f"must be an integer from 1 to {MAX_STARTS}, got {starts!r}")

    label = _hardware_label(p, m, env, bound_label)
    settings = _server_settings(p)

    wanted_families = {m.suites[s]["family"] for s in suites}
    have_families = {m.engines[e]["family"] for e in engines}
    if not wanted_families & have_families:
        raise ConfigError(
            "suites",
            f"no selected engine can run the selected suites (suite families: {sorted(wanted_families)}, engine families: {sorted(have_families)})",
        )

    inputs = _suite_inputs(p, m, suites, scale, env)
    results = str(paths.results_dir(p.get("results_dir")))
    resume_of = _resume_of(p.get("resume_of"), results)
    return RunConfig(
        engines=tuple(engines),
        suites=tuple(suites),
        backend=backend,
        scale=scale,
        repetitions=reps,
        starts=starts,
        hardware_label=label,
        results_dir=results,
        server_settings={k: str(v) for k, v in settings.items()},
        resume_of=resume_of,
        suite_inputs=inputs,
    )


#: The run parameters that describe a suite's input (``input: documents`` in the matrix), each with the environment
#: variable that gives it a deployment's default: how the nightly run, which no one triggers with parameters, measures
#: a user's own documents.
INPUT_PARAMS = {"documents": "JSONBENCH_DOCUMENTS", "read_keys": "JSONBENCH_READ_KEYS", "update_keys": "JSONBENCH_UPDATE_KEYS"}


def _input_params(p: dict[str, Any], env: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The input's parameters: each given one, else its environment variable's value (a key list comma-separated);
    and which came from the environment (parameter -> variable), so that an error names what the user set."""
    out = {k: p.get(k) for k in INPUT_PARAMS}
    from_env: dict[str, str] = {}
    for key, var in INPUT_PARAMS.items():
        raw = (env.get(var) or "").strip()
        if out[key] in (None, "", []) and raw:
            out[key] = raw if key == "documents" else [v.strip() for v in raw.split(",") if v.strip()]
            from_env[key] = var
    return out, from_env


def _suite_inputs(p: dict[str, Any], m: Matrix, suites: list[str], scale: str, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each selected suite's input, read and checked here, before any engine starts (``documents``: the user's documents).

    The input's parameters without a suite that reads them are refused (naming the field); a suite that reads
    documents without ``documents`` measures ``$JSONBENCH_DOCUMENTS``, else the shipped sample
    (jsonbench.suites.documents.input.SAMPLE). The variables apply only to a run that measures the suite: a run of
    other suites on the same deployment ignores them. A wrong one is refused naming the variable.
    """
    readers = [s for s in suites if m.suites[s].get("input") == "documents"]
    given = [k for k in INPUT_PARAMS if p.get(k) not in (None, "", [])]
    if given and not readers:
        raise ConfigError(given[0], "no selected suite reads documents; add the suite: --suites documents")
    if not readers:
        return {}
    from jsonbench.suites.documents.input import plan_documents

    params, from_env = _input_params(p, env)
    out: dict[str, dict[str, Any]] = {}
    for suite in readers:
        limit = int(m.scales[scale][suite].get("max_documents") or 0) or None
        try:
            out[suite] = plan_documents(params, limit).to_params()
        except ConfigError as e:
            var = from_env.get(e.field.split("[")[0])
            if var is None:
                raise
            raise ConfigError(f"{e.field} (from ${var})", str(e).removeprefix(f"{e.field}: ")) from e
    return out


def _with_parts(suites: list[str], m: Matrix) -> list[str]:
    """The selected suites and the suites that are ``part_of`` one of them (asking for documents runs its SQLite half)."""
    parts = [name for name, spec in m.suites.items() if spec.get("part_of") in suites and name not in suites]
    return suites + parts


def default_suites(m: Matrix, env: Mapping[str, str]) -> list[str]:
    """The suites a run measures when none are given: ``$JSONBENCH_SUITES`` (comma-separated), else the matrix's
    ``default_suites``. The nightly run, triggered by the schedule without parameters, measures these: the variable is how
    a deployment adds the documents suite to its nights. A name the matrix lacks is refused, naming the variable."""
    raw = (env.get("JSONBENCH_SUITES") or "").strip()
    if not raw:
        return list(m.raw["default_suites"])
    suites = _string_list(raw, "JSONBENCH_SUITES")
    for s in suites:
        if s not in m.suites:
            raise ConfigError("JSONBENCH_SUITES", f"unknown suite {s!r}; known: {', '.join(sorted(m.suites))}")
    return suites


def _engines_and_suites(p: dict[str, Any], m: Matrix, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The run's engines and suites (the defaults unless given: :func:`default_suites`), each declared in the matrix."""
    engines = _string_list(_given(p, "engines", m.raw["default_engines"]), "engines")
    for eid in engines:
        if eid not in m.engines:
            raise ConfigError("engines", f"unknown engine {eid!r}; known: {', '.join(sorted(m.engines))}")
    suites = _string_list(p["suites"], "suites") if p.get("suites") is not None else default_suites(m, env)
    for s in suites:
        if s not in m.suites:
            raise ConfigError("suites", f"unknown suite {s!r}; known: {', '.join(sorted(m.suites))}")
    return engines, _with_parts(suites, m)


def _backend(p: dict[str, Any], m: Matrix, env: dict[str, str], engines: list[str]) -> str:
    """The run's backend (parameter, ``$JSONBENCH_BACKEND``, the matrix's default), which every engine must have a build for."""
    backend = p.get("backend") or env.get("JSONBENCH_BACKEND") or m.raw.get("default_backend", "embedded")
    if backend not in m.backends:
        raise ConfigError("backend", f"unknown backend {backend!r}; known: {', '.join(m.backends)}")
    for eid in engines:
        if m.backend_for(eid, backend) not in m.engines[eid]["backends"]:
            raise ConfigError("backend", f"engine {eid!r} has no {backend!r} build in the matrix")
    return backend


def _hardware_label(p: dict[str, Any], m: Matrix, env: dict[str, str], bound_label: str | None) -> str:
    """The run's hardware label (parameter, the DAG's bound label, ``$JSONBENCH_HARDWARE_LABEL``, the matrix's, ``local``)."""
    label = p.get("hardware_label") or bound_label or env.get("JSONBENCH_HARDWARE_LABEL") or m.raw.get("hardware_label", "local")
    if not LABEL_RE.match(str(label)):
        raise ConfigError("hardware_label", f"{label!r} must match {LABEL_RE.pattern}")
    if bound_label and label != bound_label:
        raise ConfigError("hardware_label", f"this DAG measures the host labelled {bound_label!r}; trigger the DAG of {label!r} instead")
    return str(label)


def _server_settings(p: dict[str, Any]) -> dict[str, Any]:
    """The run's extra server settings: valid setting names with finite string or number values."""
    settings = p.get("server_settings") or {}
    if not isinstance(settings, dict):
        raise ConfigError("server_settings", "must be an object of setting name to value")
    for name, value in settings.items():
        if not SETTING_NAME_RE.match(str(name)):
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
    :func:`jsonbench.orchestration.deployment.dag_engines`); an id the matrix does not declare is an error.
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
                scale_params={**scale[suite], **cfg.suite_inputs.get(suite, {})},
                repetitions=cfg.repetitions,
                run=run,
                quiet=quiet,
                postgres=postgres,
                position=position,
            ).with_starts(cfg.starts)
        )
    return cells
