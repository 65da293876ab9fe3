"""Run Apache Otava's change-point detection on a batch of series (executed by the Otava venv's Python).

Reads one JSON object from stdin::

    {"window_len": 30, "max_pvalue": 0.001,
     "series": {"<id>": {"values": [1.0, 1.1, ...], "min_magnitude": 0.5}, ...}}

and writes ``{"otava": "<version>", "results": {"<id>": [change point, ...]}}`` to stdout, each
change point ``{"index", "pvalue", "mean_before", "mean_after", "stddev_before", "stddev_after",
"forward_change", "magnitude"}`` (``index`` is the first point of the new segment). It imports
nothing from jsonbench: it runs in Otava's own environment (see ``otava-requirements.txt``).
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version


def main() -> int:
    from otava.analysis import compute_change_points

    request = json.load(sys.stdin)
    window_len = int(request.get("window_len", 30))
    max_pvalue = float(request.get("max_pvalue", 0.001))
    results: dict[str, list[dict[str, float]]] = {}
    for sid, spec in request["series"].items():
        values = [float(v) for v in spec["values"]]
        if len(values) < 3:
            results[sid] = []
            continue
        cps, _weak = compute_change_points(
            values, window_len=max(window_len, 2), max_pvalue=max_pvalue, min_magnitude=float(spec.get("min_magnitude", 0.0))
        )
        results[sid] = [
            {
                "index": int(cp.index),
                "pvalue": float(cp.stats.pvalue),
                "mean_before": float(cp.stats.mean_before()),
                "mean_after": float(cp.stats.mean_after()),
                "stddev_before": float(cp.stats.stddev_before()),
                "stddev_after": float(cp.stats.stddev_after()),
                "forward_change": float(cp.stats.forward_rel_change()),
                "magnitude": float(cp.stats.change_magnitude()),
            }
            for cp in cps
        ]
    json.dump({"otava": version("apache-otava"), "results": results}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
