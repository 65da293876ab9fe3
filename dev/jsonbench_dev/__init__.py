"""The maintainers' instruments: the benchmark of the benchmark and the check of the checks (``./bin/jsonbench-dev``).

The handchecks (the pipeline against the same work by hand), the pgbench overhead, what orchestration costs and
Airflow's floor beneath it, a run through a private scheduler, the report's build benchmark, the checks' calibration
and the record it writes, their own check (checkcheck), drift on every recorded host, where noise enters, the
derivation of the deterministic facts, the quiet detector's check and the calibration campaign. The command table is
:mod:`jsonbench_dev.cli`. This package lives outside ``plugins/``: it is neither in the wheel nor in the Airflow
containers, and nothing of the product imports it (``tests/unit/test_import_graph.py``), so a change here cannot
change what the DAGs measure or judge.
"""
