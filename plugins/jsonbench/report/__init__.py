"""The static HTML report of the benchmark results (``<results>/report/index.html``).

Built by the ``jsonb_benchmark_report`` DAG after every checked run (it is scheduled on the Asset
``jsonbench_validations``), at the end of ``python -m jsonbench.cli run``, or by
``python -m jsonbench.cli report [--results-dir D] [--run-id R]``. See :mod:`jsonbench.report.page`.
"""

from __future__ import annotations

from jsonbench.report.page import build_report

__all__ = ["build_report"]
