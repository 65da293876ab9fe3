"""Results: one :class:`~jsonbench.results.measurement.Measurement` per metric, staged per task
(:mod:`~jsonbench.results.staging`), published into the hive-partitioned Parquet dataset in one atomic step
(:mod:`~jsonbench.results.publish`) with the tidy schema of :mod:`~jsonbench.results.schema`."""
