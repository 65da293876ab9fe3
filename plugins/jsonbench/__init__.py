"""jsonbench: a benchmark pipeline for JSON document storage in PostgreSQL and SQLite.

Modules, by what they hold:

* :mod:`jsonbench.matrix`: the matrix file, the DAG's Params schema, run planning.
* :mod:`jsonbench.engines`: the engine contract (:mod:`~jsonbench.engines.base`) and one adapter per backend.
* :mod:`jsonbench.suites`: the suite contract (:mod:`~jsonbench.suites.base`) and one module per seed.
* :mod:`jsonbench.dataset`: measurements, staging files, the Parquet schema and publishing (the results dataset).
* :mod:`jsonbench.checks`: Great Expectations checks (sanity, reproduction, drift) and alerts.
* :mod:`jsonbench.orchestration.tasks`: what each DAG task does; :mod:`jsonbench.cli`: the same from a shell.
"""

__version__ = "0.1.0"
