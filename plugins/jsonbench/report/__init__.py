"""The static HTML report of the benchmark results (``<results>/report/index.html``).

Built by the ``jsonb_benchmark_report`` DAG after every checked run (it is scheduled on the Asset
``jsonbench_validations``), at the end of ``python -m jsonbench.cli run``, or by
``jsonbench report [--results-dir D] [--run-id R]``. See :mod:`jsonbench.report.page`;
:mod:`jsonbench.report.serve` serves it inside Airflow's web server.

``build_report`` is imported on first use: the Airflow plugin imports :mod:`jsonbench.report.serve` in every
process that loads plugins (each task's runner among them), which must not pay for pandas and the page's templates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonbench.report.page import build_report

__all__ = ["build_report"]


def __getattr__(name: str) -> Any:
    if name == "build_report":
        from jsonbench.report.page import build_report

        return build_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
