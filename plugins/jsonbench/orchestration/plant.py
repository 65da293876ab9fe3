"""Planting a wrong measurement into a real run, for the tests of the checks (``$JSONBENCH_PLANT``).

A test of the confirmation path must make one timing fail on the night's measurement and pass (or
fail again) on its confirmation, whatever the machine's speed: no honest measurement does that on
demand. ``JSONBENCH_PLANT`` is a JSON list of plants, each multiplying every sample of one metric::

    [{"cell": "large_document_update__postgres-16", "workload": "json_big", "metric": "update_time",
      "factor": 0.001, "on": "first"}]

``on`` is ``first`` (the run's own measurement only; its confirmation measures honestly), ``every``
(the confirmation too) or ``confirmation``. A planted measurement says so in its ``extra``
(``planted``: the factor), so a planted row can never pass for a real one, and the task log warns.
Unset (the normal case) it costs one environment lookup.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from typing import Any

from jsonbench.cell import Cell
from jsonbench.dataset.measurement import Measurement

log = logging.getLogger(__name__)

ENV_VAR = "JSONBENCH_PLANT"
ON = ("first", "every", "confirmation")


def _plants() -> list[dict[str, Any]]:
    raw = os.environ.get(ENV_VAR)
    if not raw:
        return []
    plants = json.loads(raw)
    for p in plants:
        if p.get("on", "first") not in ON or not isinstance(p.get("factor"), (int, float)):
            raise ValueError(f"{ENV_VAR}: each plant needs a numeric factor and on in {ON}, got {p!r}")
    return list(plants)


def _applies(plant: dict[str, Any], cell: Cell, workload: str) -> bool:
    on = plant.get("on", "first")
    when = on == "every" or (on == "first") != cell.run.is_confirmation
    return bool(when and plant.get("cell") == cell.cell_id and plant.get("workload") == workload)


def planted(measurements: list[Measurement], cell: Cell, workload: str) -> list[Measurement]:
    """``measurements`` with every plant of ``$JSONBENCH_PLANT`` that applies to this cell, workload and measurement."""
    plants = [p for p in _plants() if _applies(p, cell, workload)]
    if not plants:
        return measurements
    out = []
    for m in measurements:
        for p in plants:
            if m.metric == p.get("metric") and m.variant == p.get("variant", m.variant):
                factor = float(p["factor"])
                m = dataclasses.replace(m, samples=tuple(s * factor for s in m.samples), extra={**m.extra, "planted": factor})
                log.warning("PLANTED: %s/%s/%s x %g (%s)", cell.cell_id, workload, m.metric, factor, ENV_VAR)
        out.append(m)
    return out
