"""Every expectation file checked before any engine starts: :func:`validate_library`.

Called by the plan task (and the CLI): a malformed expectation file fails the run there, naming the
file and the field, instead of failing the check after an hour of benchmarking. The file's kind is
read from its name; reproduction files are checked by :mod:`jsonbench.checks.validate_findings`,
the shared sanity, seed and drift files here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonbench.checks.library import Library, expectations_dir, load_library
from jsonbench.checks.validate_entries import ExpectationFileError, check_entry, gx_memo, has_names, is_number, need
from jsonbench.checks.validate_findings import check_reproduction

_KINDS = ("reproduction", "seed", "sanity", "drift")


def _check_sanity(path: Path, data: dict[str, Any]) -> None:
    frames = data.get("frames")
    need(isinstance(frames, dict), path, "frames", "missing or not an object of frame name -> {expectations: [...]}")
    assert isinstance(frames, dict)  # need() raised otherwise
    for name, frame in frames.items():
        ok = isinstance(frame, dict) and isinstance(frame.get("expectations", []), list)
        need(ok, path, f"frames.{name}.expectations", "must be a list")
        for i, entry in enumerate(frame.get("expectations", [])):
            check_entry(path, f"frames.{name}.expectations[{i}]", entry)


def _check_seed(path: Path, data: dict[str, Any]) -> None:
    figures = data.get("figures", [])
    need(isinstance(figures, list), path, "figures", "must be a list")
    for i, fig in enumerate(figures):
        need(has_names(fig, "workload", "metric"), path, f"figures[{i}]", "a figure names a workload and a metric")
        need(is_number(fig.get("value")), path, f"figures[{i}].value", f"must be a number, got {fig.get('value')!r}")


def _check_drift(path: Path, data: dict[str, Any]) -> None:
    """The drift policy (``drift.json``, a suite's ``<suite>.drift.json`` overrides): numbers where the check computes."""
    keys = ("min_history", "deterministic_min_history", "window", "window_len", "recent_runs", "max_pvalue", "tolerance")
    for key in keys:
        if key in data:
            need(is_number(data[key]) and data[key] >= 0, path, key, f"must be a non-negative number, got {data[key]!r}")
    if "points" in data:
        need(data["points"] in ("best", "samples"), path, "points", f"must be 'best' or 'samples', got {data['points']!r}")
    magnitude = data.get("min_magnitude", {})
    need(isinstance(magnitude, dict), path, "min_magnitude", "must be an object {default, units: {unit: number}}")
    if "default" in magnitude:
        value = magnitude["default"]
        need(is_number(value) and value >= 0, path, "min_magnitude.default", f"must be a non-negative number, got {value!r}")
    units = magnitude.get("units", {})
    need(isinstance(units, dict), path, "min_magnitude.units", "must be an object of unit -> number")
    for unit, value in units.items():
        need(is_number(value) and value >= 0, path, f"min_magnitude.units.{unit}", f"must be a non-negative number, got {value!r}")
    for key in ("deterministic", "statistical", "deterministic_reason"):
        need(
            key not in data,
            path,
            key,
            "metric kinds are declared by the suite beside each metric (Suite.metric_kind), not by patterns; remove this key",
        )
    tolerances = data.get("tolerances", {})
    need(
        isinstance(tolerances, dict), path, "tolerances", "must be an object of metric (or workload/metric) -> number or {tolerance, floor}"
    )
    for name, spec in tolerances.items():
        for sub, value in spec.items() if isinstance(spec, dict) else [("", spec)]:
            field = f"tolerances.{name}" + (f".{sub}" if sub else "")
            need(sub in ("", "tolerance", "floor"), path, field, "a tolerance object has only 'tolerance' and 'floor'")
            need(is_number(value) and value >= 0, path, field, f"must be a non-negative number, got {value!r}")


def validate_library(root: Path | None = None) -> Library:
    """Parse and check every expectation file under ``root``; raise :class:`ExpectationFileError` naming file and field.

    The one validator of the expectation files (the plan step and the tests call it). Checks JSON
    syntax, the file name's kind, and per kind the fields the checks rely on: every expectation
    entry is built by Great Expectations itself (an unknown type or a missing kwarg fails here),
    every finding has an id, terms, requirements the checks can evaluate, an opposite the seed's
    own value stays out of, and per scale a band ``{min, max}`` that excludes that opposite, names
    the runs it was derived from (or says why none), and says why when the seed's value lies
    outside it; seed figures and drift thresholds are numbers. Returns the parsed :class:`Library`. Entries GX built
    once under its installed version are not built again (:class:`~jsonbench.checks.validate_entries.GxMemo`).
    """
    root = root or expectations_dir()
    seeds: dict[str, dict[str, Any]] = {}
    with gx_memo() as memo:
        _validate_files(root, seeds)
    memo.save()  # only after every file passed
    return load_library(root)


def _validate_files(root: Path, seeds: dict[str, dict[str, Any]]) -> None:
    for path in sorted(root.glob("*.json"), key=lambda p: (".reproduction." in p.name, p.name)):  # seeds before findings
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ExpectationFileError(path, f"line {exc.lineno} column {exc.colno}", f"not valid JSON: {exc.msg}") from None
        need(isinstance(data, dict), path, "(top level)", f"must be a JSON object, got {type(data).__name__}")
        parts = path.name.split(".")
        kind = parts[1] if len(parts) == 3 else parts[0]
        if len(parts) == 2:
            need(kind in ("sanity", "drift"), path, "(file name)", "shared files: sanity.json, drift.json; a suite's: <suite>.<kind>.json")
        else:
            need(len(parts) == 3 and kind in _KINDS, path, "(file name)", f"must be <suite>.<kind>.json with kind one of {list(_KINDS)}")
        if kind == "reproduction":
            check_reproduction(path, data, seeds.get(parts[0]))
        else:
            {"sanity": _check_sanity, "seed": _check_seed, "drift": _check_drift}[kind](path, data)
        if kind == "seed":
            seeds[parts[0]] = data
