"""Benchmark suites. The contract (and the recipe for adding one) is in :mod:`jsonbench.suites.base`.

A suite is registered in one place: its block under ``suites:`` in ``include/matrix.yaml`` names its
class (``module: pkg.mod:Class``). Importing a suite module is cheap (no database drivers), because
the DAG file reads the suites' workload names at parse time to create one task per workload.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jsonbench import load_object
from jsonbench.suites.base import Suite


@lru_cache(maxsize=64)
def _suite_class(target: str) -> type[Suite[Any]]:
    """The suite class the matrix file names (``module:Class``), loaded once per target by the project's one loader."""
    cls = load_object(target)
    if not (isinstance(cls, type) and issubclass(cls, Suite)):
        raise TypeError(f"{target!r} is not a Suite subclass")
    return cls


def get_suite(name: str) -> Suite[Any]:
    """An instance of the named suite (its class is the ``module`` of its block in the matrix)."""
    from jsonbench.errors import ConfigError
    from jsonbench.matrix import load_matrix

    suites = load_matrix().suites
    if name not in suites:
        raise ConfigError("suites", f"unknown suite {name!r}; known: {', '.join(sorted(suites))}")
    target = str(suites[name]["module"])
    try:
        return _suite_class(target)()
    except (ImportError, AttributeError, TypeError, ValueError) as exc:  # ValueError: a path with no module in it
        raise ConfigError(f"matrix.suites.{name}.module", f"cannot load {target!r}: {exc}") from None
