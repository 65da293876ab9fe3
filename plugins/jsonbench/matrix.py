"""The benchmark matrix: loading and checking ``include/matrix.yaml``, the one place engines, backends,
suites and scales are declared.

:func:`load_matrix` reads the file once (cached) and checks it, raising :class:`MatrixFileError`
naming the file and the YAML path of the bad entry. What a run makes of it (its parameters checked,
its cells) is :mod:`jsonbench.orchestration.plan`.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from jsonbench import paths
from jsonbench.cell import MAX_STARTS, QuietPolicy
from jsonbench.errors import BenchmarkError, ConfigError

LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
SETTING_NAME_RE = re.compile(r"^[a-z_][a-z0-9_.]*$")


@dataclass(frozen=True)
class Matrix:
    """The parsed matrix file."""

    raw: dict[str, Any]

    @property
    def engines(self) -> dict[str, dict[str, Any]]:
        return self.raw["engines"]

    @property
    def scheduled_engines(self) -> list[str]:
        """The engines the deployment's DAGs carry task groups for by default: all but those marked ``on_demand``."""
        return [eid for eid, eng in self.engines.items() if not eng.get("on_demand")]

    @property
    def families(self) -> dict[str, dict[str, Any]]:
        return self.raw["families"]

    @property
    def backends(self) -> tuple[str, ...]:
        """Every backend a family of the file registers, in the order the file names them first."""
        return _backends(self.raw)

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


def _backends(raw: dict[str, Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(b for family in (raw.get("families") or {}).values() for b in (family.get("backends") or {})))


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
#: What a suite may read besides the matrix (``input:`` of its block): ``documents``, the user's documents.
SUITE_INPUTS = ("documents",)


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
        c.need(
            isinstance(eng.get("on_demand", False), bool),
            f"matrix.engines.{eid}.on_demand",
            f"must be true or false, got {eng.get('on_demand')!r}",
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
        c.need(
            suite.get("input") in (None, *SUITE_INPUTS),
            f"matrix.suites.{sname}.input",
            f"{suite.get('input')!r} is not an input a suite can read (known: {', '.join(SUITE_INPUTS)})",
        )
        part_of = suite.get("part_of")
        c.need(
            part_of is None
            or (part_of in suites and part_of != sname and isinstance(suites[part_of], dict) and suites[part_of].get("part_of") is None),
            f"matrix.suites.{sname}.part_of",
            f"{part_of!r} must name another suite declared under suites (one that is not itself part of one)",
        )


def _check_scales(c: _FileCheck, scales: dict[str, Any], suites: dict[str, Any]) -> None:
    """``scales``: repetitions, engine starts, a statement timeout, and scalar parameters for every suite."""
    for scale_name, scale in scales.items():
        reps = scale.get("repetitions")
        c.need(
            isinstance(reps, int) and not isinstance(reps, bool) and reps >= 1,
            f"matrix.scales.{scale_name}.repetitions",
            f"must be an integer >= 1, got {reps!r}",
        )
        starts = scale.get("starts", 1)
        c.need(
            isinstance(starts, int) and not isinstance(starts, bool) and 1 <= starts <= MAX_STARTS,
            f"matrix.scales.{scale_name}.starts",
            f"must be an integer from 1 to {MAX_STARTS}, got {starts!r}",
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
    for i, name in enumerate(raw["default_engines"]):
        c.need(
            not engines[name].get("on_demand"),
            f"matrix.default_engines[{i}]",
            f"{name!r} is on_demand (no task group in the nightly DAG), so it cannot be a default engine",
        )
    c.need(raw["default_scale"] in scales, "matrix.default_scale", f"{raw['default_scale']!r} is not one of the scales {list(scales)}")
    if "default_backend" in raw:
        backends = list(_backends(raw))
        c.need(raw["default_backend"] in backends, "matrix.default_backend", f"{raw['default_backend']!r} is not one of {backends}")
    if "hardware_label" in raw:
        c.need(
            isinstance(raw["hardware_label"], str) and bool(LABEL_RE.match(raw["hardware_label"])),
            "matrix.hardware_label",
            f"{raw['hardware_label']!r} must match {LABEL_RE.pattern}",
        )


def _check_settings(c: _FileCheck, raw: dict[str, Any], suites: dict[str, Any]) -> None:
    """``server_settings``, ``suite_settings`` (of declared suites) and ``initdb``: valid names with scalar values."""
    for name, value in c.mapping(raw.get("server_settings") or {}, "matrix.server_settings").items():
        c.need(bool(SETTING_NAME_RE.match(str(name))), f"matrix.server_settings.{name}", "not a valid setting name")
        c.need(isinstance(value, _SCALAR), f"matrix.server_settings.{name}", f"value must be a string or number, got {value!r}")
    for sname, settings in c.mapping(raw.get("suite_settings") or {}, "matrix.suite_settings").items():
        c.need(sname in suites, f"matrix.suite_settings.{sname}", "not a suite declared under suites")
        for name, value in c.mapping(settings or {}, f"matrix.suite_settings.{sname}").items():
            c.need(
                bool(SETTING_NAME_RE.match(str(name))) and isinstance(value, _SCALAR),
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
