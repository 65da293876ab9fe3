"""jsonbench: a benchmark pipeline for JSON document storage in PostgreSQL and SQLite.

Rooms, by what they hold (a room imports only from those listed after it, and from the base):

* :mod:`jsonbench.cli`: the user's command line, ``jsonbench`` (its commands declared in ``cli/config.py``).
  The maintainers' instruments are not here: ``dev/jsonbench_dev`` (``./bin/jsonbench-dev``), which the product
  never imports.
* :mod:`jsonbench.orchestration`: planning and driving a run: the run plan, the DAG's task callables,
  costs, deployments, a run from the command line (``dagtest``) and a run again in place (``rerun``).
* :mod:`jsonbench.report`: the static HTML report (templates under ``report/templates/``).
* :mod:`jsonbench.checks`: Great Expectations checks (sanity, reproduction, drift) and alerts.
* :mod:`jsonbench.suites`: the suite contract (:mod:`~jsonbench.suites.base`) and one module per seed.
* :mod:`jsonbench.dataset`: measurements, staging files, the Parquet schema and publishing (the results dataset).
* :mod:`jsonbench.engines`: the engine contract (:mod:`~jsonbench.engines.base`) and one adapter per backend.
* :mod:`jsonbench.host`: the benchmark host's lease, load and facts, and the engines alive on it (``census``).
* The base: :mod:`~jsonbench.matrix` (the matrix file, loaded and checked), :mod:`~jsonbench.cell` (the
  typed values tasks pass on), :mod:`~jsonbench.pgbench`, :mod:`~jsonbench.sqlfiles`,
  :mod:`~jsonbench.paths`, :mod:`~jsonbench.errors`, :mod:`~jsonbench.dataset.fsio` (durable writes, which
  the host's lease uses too), and :func:`load_object` here.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def load_object(ref: str) -> Any:
    """The object an import path names: ``module:Name`` (the matrix file's adapters and suites) or
    ``module.Name`` (notifier classes, as Airflow spells them). Raises ImportError or AttributeError."""
    import importlib

    module, sep, name = ref.partition(":")
    if not sep:
        module, _, name = ref.rpartition(".")
    return getattr(importlib.import_module(module), name)
