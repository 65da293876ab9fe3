"""Planning and driving a run: the run plan (:mod:`.plan`), the DAG's task callables (:mod:`.tasks`, and
:mod:`.confirmation` for the suspects measured again), what a cell's tasks sample beside the suite's
figures (:mod:`.resources`, :mod:`.canary`), what a plan costs (:mod:`.costs`), where the DAGs are
deployed (:mod:`.deployment`) and the tests' hook that plants a wrong measurement into a run's measure
step (:mod:`.plant`, ``$JSONBENCH_PLANT``).

The matrix file itself (loading and checking ``include/matrix.yaml``) is :mod:`jsonbench.matrix`;
this package turns it and a run's parameters into cells and runs them. The DAG file imports
:mod:`.deployment` at parse time, so this package imports nothing heavy on its own.
"""
