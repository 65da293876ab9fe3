"""Great Expectations checks of a published run: sanity, reproduction of the seeds' findings, drift.

Drift's judgement itself lives in :mod:`jsonbench.history` (how a night is judged against its history); this
package runs it as one of the run's expectation suites, beside sanity and reproduction, and confirms its suspects.

:func:`check_run` is what the benchmark DAG's ``check`` task calls. The expectations live as JSON
under ``include/expectations/`` (see :mod:`jsonbench.checks.library`; :mod:`jsonbench.checks.validate` checks them
before any engine starts); alerts on failure are in
:mod:`jsonbench.checks.alerts`, which the DAG file imports at parse time, so this package imports
its heavy parts (pandas, Great Expectations) only when :func:`check_run` is first asked for.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ChecksFailed", "check_run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from jsonbench.checks import examine

        return getattr(examine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
