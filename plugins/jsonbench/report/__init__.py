"""The static HTML report of the benchmark results (``<results>/report/index.html``).

Built by the ``jsonb_benchmark_report`` DAG whenever the benchmark publishes a run, or by
``python -m jsonbench.cli report [--results-dir D] [--run-id R]`` without Airflow.
"""

from __future__ import annotations

from jsonbench.report.page import build_report

__all__ = ["build_report"]
