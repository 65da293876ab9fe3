"""Great Expectations checks of a published run: sanity, reproduction of the seeds' findings, drift.

:func:`check_run` is what the benchmark DAG's ``check`` task calls. The expectations live as JSON
under ``include/expectations/`` (see :mod:`jsonbench.checks.library`); alerts on failure are in
:mod:`jsonbench.checks.alerts`.
"""

from __future__ import annotations

from jsonbench.checks.run import ChecksFailed, check_run

__all__ = ["ChecksFailed", "check_run"]
