"""The maintainers' commands: the benchmark of the benchmark and the check of the checks.

Each is reached through ``python -m jsonbench.cli``: the handchecks (the pipeline against the same work
by hand), the pgbench overhead, a run through a private scheduler, a rerun in place, the process
census, the report's build benchmark, the checks' calibration, their own check (checkcheck), the
derivation of the deterministic facts, the quiet detector's check (quietcheck) and the calibration
campaign (N honest runs, then the noise record :mod:`jsonbench.history.noise` reads). Nothing a
nightly run imports reaches this package (a test on the import graph holds it so): a change here
cannot change what the DAGs measure or judge.
"""
