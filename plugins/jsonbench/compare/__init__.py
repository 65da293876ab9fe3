"""An interleaved A/B comparison of two arms (an engine build with its server settings) on one host.

* :mod:`~jsonbench.compare.params`: the comparison's parameters, checked before any engine starts;
* :mod:`~jsonbench.compare.tasks`: what each task of the DAG ``jsonb_benchmark_compare`` does (one start of one
  arm is one nightly cell: the driver of :mod:`jsonbench.orchestration.tasks` measures it);
* :mod:`~jsonbench.compare.judge`: per metric, the paired statistics of :mod:`jsonbench.history.stats.paired`;
* :mod:`~jsonbench.compare.publish`: the ``comparisons`` and ``comparison_starts`` tables of the Parquet dataset and
  the check;
* :mod:`~jsonbench.compare.inherit`: which builds a compared build inherits its noise from (what drift reads);
* :mod:`~jsonbench.compare.page`: the verdict page with its forest plot;
* :mod:`~jsonbench.compare.command`: ``jsonbench compare``, one run of the DAG and its verdict table.
"""
