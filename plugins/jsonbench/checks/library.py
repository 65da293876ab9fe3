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
This module reads the files as they are; :func:`jsonbench.checks.validate.validate_library` checks
them field by field before any engine starts.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonbench import paths


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
