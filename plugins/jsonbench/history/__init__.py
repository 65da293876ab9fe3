"""How a night is judged against its history: the noise of each level, the host's speed, drift, change points.

Reproduction (:mod:`jsonbench.checks`) asks whether the seeds' conclusions hold tonight, whatever the host.
This room asks the other question: did tonight move beyond this host's own history? Read it in this order:

* :mod:`~jsonbench.history.rules`: how each metric is judged, from the kind its suite declares
  (deterministic facts exactly; timed and sampled ones statistically);
* :mod:`~jsonbench.history.stats`: the statistics over plain numbers (p-values and tails, Benjamini-Hochberg,
  the noise levels, thresholds and minimum detectable shifts, the window and family tests' arithmetic);
* :mod:`~jsonbench.history.noise`: the noise model: where noise enters (repetitions, engine starts, hosts),
  the calibration record a night reads, and which of its entries serve a series;
* :mod:`~jsonbench.history.hostspeed`: the canary beside each cell, and what of a timing's move it takes out;
* :mod:`~jsonbench.history.changepoints` (and ``otava_runner.py``, run by Apache Otava's own venv): where a
  series' current level starts;
* :mod:`~jsonbench.history.drift`: tonight against that level, series by series, family by family (an
  engine's suite), and the run as a whole (the host or the harness); a package read in the order its
  ``__init__`` lists: which earlier runs count, the facts, the calibrated series and their window test, the
  families, the verdict and its wording, and ``drift_frame``, which runs them stage after stage;
* :mod:`~jsonbench.history.cleared`: the earlier nights as drift reads them (a value its own confirmation
  cleared reads as its re-measurement).

Two neighbours finish the story. A drift verdict is a *suspect* until its cell is measured again in the same
DAG run: :mod:`jsonbench.checks.confirm` does that, beside reproduction, because it re-runs both checks. The
record is built by a maintainers' tool from recorded honest runs of several hosts
(:mod:`jsonbench_dev.record`, ``jsonbench-dev calibrate --record``), never by a night. Nothing here imports
the checks, the report or the tools: they import this.
"""
