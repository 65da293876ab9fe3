"""Drift: tonight's values against the history of the same hardware label, engine build and scale.

One row per (engine, workload, variant, metric) measured tonight. History is every earlier
published run of the same hardware label, scale and suite (status ok), at most ``window`` runs, of
the same engine id and engine build, of the same design (the server's settings and its processes' ASLR,
and the engine starts a figure rests on) and for a suite that reads an input (the documents suites) of
the same input (:func:`same_input`). How a metric is judged follows its kind
(:data:`jsonbench.dataset.measurement.MetricKind`), which the suite declares beside the metric: the
row's ``metric_kind`` column, or for rows written before that column existed the suite's
:meth:`~jsonbench.suites.base.Suite.metric_kind`. No pattern over names or units guesses it.

* **deterministic** (counts, sizes, plan facts, matched rows): a fact identical in every one of at least two earlier
  runs fails on any change (method ``unmoved``, both values in the note; so does a sampled or timed figure that never
  moved where the record saw no spread either); otherwise tonight against the median of the
  history, within a tight relative ``tolerance`` (and an absolute ``floor``; a suite may set either
  per metric in ``<suite>.drift.json`` under ``tolerances``); one earlier run is enough
  (``deterministic_min_history``). ``change_points`` lists every run whose value differs from the
  run before it beyond the tolerance. Method ``relative_tolerance``.
* **statistical** (kinds ``timed`` and ``sampled``: timings, rates, ANALYZE's estimates, WAL volumes
  and HOT counts of timed runs; a metric whose kind nobody declares lands here too, with a note):
  Apache Otava's change-point detection
  (E-divisive means, Student's t-test significance, ``max_pvalue``, and a minimum relative
  magnitude per unit, ``min_magnitude``) over the series of history plus tonight, each run
  contributing its per-repetition samples (``points: "samples"``) or its published value
  (``"runs"``). A change point counts as drift when it starts at one of the last ``recent_runs``
  runs (tonight included): older ones were reported when they were new, and are listed, not
  alarmed. Method ``otava``.

* **calibrated** (a statistical series, kind ``timed`` or ``sampled``, that has an entry for its engine
  id measured on this build, up to the interpreter's patch release, in the calibration record of the run's hardware
  label and scale, see
  :mod:`jsonbench.history.noise`): its threshold follows from its own measured noise, not from one
  ``min_magnitude``. Tonight, and the mean of the last 2 and 3 runs ending tonight, are tested
  against the earlier quiet runs of the series' current level (Otava's last change point in the
  history marks where it starts, once the history has ``min_history`` runs; before that, all of it)
  with the record's sigma learned on tonight's host (the record's level inside one host, scaled by how quiet
  this host's family is against it over its nights, and each series' own quiet nights here shrunk towards that:
  :func:`~jsonbench.history.drift.series.learn_from_family`, :mod:`jsonbench.history.stats.own`); one earlier run is
  enough (``calibrated_min_history``). Five ways to a
  discovery, each with the false-discovery rate controlled across every suite of the run at
  ``fdr_q``: a lone series whose p-value under the honest runs' heavy tail survives
  Benjamini-Hochberg over all the run's series; or a series of a *family* (one engine's suite) whose
  median change the family test finds (BH over the families, then BH within each selected family
  at ``q * R / F``: Benjamini & Bogomolov 2014), moving the same way; a family's change counts beyond
  the host's own move that night (the median of its suite's engines, once three ran), since a host
  that slowed moves every engine together and no version change does; or a series of a family whose
  *verdict* stands: its median moved beyond the host's over the last two or three nights, each night
  the same way (BH at ``fdr_q`` over the families), and the series went along (one-sided p <=
  ``family_verdict_p``: :func:`~jsonbench.history.drift.family_verdicts.verdict_calls`); or a series of a *version*
  whose suites, averaged, moved beyond the versions beside them, judged at the version's sigma learned from this
  host's own nights (BH at ``fdr_q`` over the versions), and the series went along
  (:func:`~jsonbench.history.drift.versions.version_calls`); or a series of a *workload* of one version whose
  timings' median moved beyond the same workload's on the versions beside it, at a sigma learned the same way
  (:func:`~jsonbench.history.drift.workloads.workload_calls`). Every way, the change must exceed ``min_effect``.
  Each row carries its ``pvalue``, ``p_adjusted``, ``sigma``, ``threshold`` and ``mds`` (the minimum
  detectable shift of the series alone). Method ``calibrated ...``.

  Why not Otava alone: E-divisive needs several runs on each side of a change to reach its
  p-value, so a new level cannot be seen the night it starts, and its ``min_magnitude`` of 1.5x for
  every timing missed every 1.25x regression. With the noise measured beforehand, one
  earlier run and one night are enough for a large change, three nights for a small one.

* **polled peaks** (a cell's ``_cell`` ``disk_peak`` and ``peak_rss``, read by a poller between measure windows):
  each read is a lower bound, so tonight is judged one-sided against the largest earlier read (and the record's figure
  for the hardware type, when it serves the series), and fails only beyond the plan's margin
  (:func:`~jsonbench.history.drift.facts.judge_polled_peak`). Method ``polled_peak``.

Disturbed windows: a measurement row whose ``quiet`` column is false (the host was busy beyond the
matrix's ``quiet_window`` threshold during its measure windows) is left out of every statistical
history, and tonight's disturbed timing rows are reported as ``disturbed``, not judged: a busy hour
is not a regression. Deterministic metrics are judged either way (a busy hour changes no count).
Rows without the column (older runs) count as quiet.

Verdicts: ``ok``, ``drift``, ``insufficient_history`` (too few usable earlier runs; not judged),
``disturbed`` (see above), ``excluded`` (the policy leaves the metric out), ``missing`` (the engine's
previous run of this build published the metric, measured or not applicable, and tonight's did not:
completeness per variant, which the suite's ``expected_metrics()`` cannot express). ``drift_score`` is > 1
exactly when the verdict is ``drift``; the GX drift suite expects it in [0, 1] on every judged row.

The package, in the order a night runs through it:

* :mod:`~jsonbench.history.drift.selection` and :mod:`~jsonbench.history.drift.designs`: which earlier runs count;
* :mod:`~jsonbench.history.drift.policy`: the policy's knobs; :mod:`~jsonbench.history.drift.rows`: a drift row;
* :mod:`~jsonbench.history.drift.facts`: deterministic facts, polled peaks, lost metrics;
* :mod:`~jsonbench.history.drift.otava_series`: series judged (or segmented) by Otava's change points;
* :mod:`~jsonbench.history.drift.series` and :mod:`~jsonbench.history.drift.window`: a calibrated series, the canary
  taken out, and its window test;
* :mod:`~jsonbench.history.drift.suite`: one suite stage after stage; :mod:`~jsonbench.history.drift.families`,
  :mod:`~jsonbench.history.drift.beside` and :mod:`~jsonbench.history.drift.family_verdicts`: the run's families;
  :mod:`~jsonbench.history.drift.versions` and :mod:`~jsonbench.history.drift.workloads`: each version over its
  suites, each workload beside the same workload of the other versions;
* :mod:`~jsonbench.history.drift.verdict` and :mod:`~jsonbench.history.drift.wording`: a calibrated row's verdict
  and note; :mod:`~jsonbench.history.drift.frame`: ``drift_frame``; :mod:`~jsonbench.history.drift.expectations`: its
  Great Expectations suite.

The arithmetic over plain numbers (p-values, tails, Benjamini-Hochberg, the window and family tests) is
:mod:`jsonbench.history.stats`'s.
"""

from jsonbench.history.drift.designs import NOT_DESIGN, RESTART_NOTE, design_of, design_restarts, input_of, same_input
from jsonbench.history.drift.expectations import drift_expectations
from jsonbench.history.drift.facts import judge_deterministic, judge_polled_peak
from jsonbench.history.drift.families import FamilyCall, FamilyJudgement
from jsonbench.history.drift.family_verdicts import judge_families
from jsonbench.history.drift.frame import drift_frame
from jsonbench.history.drift.policy import Settings, retired_variants
from jsonbench.history.drift.rows import DRIFT_COLUMNS, UNDECLARED, VERDICTS
from jsonbench.history.drift.selection import history_of, not_judgeable, reference_rows
from jsonbench.history.drift.series import CalibratedSeries
from jsonbench.history.drift.window import WindowedSeries, WindowTest, window_test
from jsonbench.history.drift.wording import harness_words, known_revision, short_revision

__all__ = [
    "DRIFT_COLUMNS",
    "NOT_DESIGN",
    "RESTART_NOTE",
    "UNDECLARED",
    "VERDICTS",
    "CalibratedSeries",
    "FamilyCall",
    "FamilyJudgement",
    "Settings",
    "WindowedSeries",
    "WindowTest",
    "design_of",
    "design_restarts",
    "drift_expectations",
    "drift_frame",
    "harness_words",
    "history_of",
    "input_of",
    "judge_deterministic",
    "judge_families",
    "judge_polled_peak",
    "known_revision",
    "not_judgeable",
    "reference_rows",
    "retired_variants",
    "same_input",
    "short_revision",
    "window_test",
]
