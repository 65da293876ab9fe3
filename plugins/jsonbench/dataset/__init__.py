"""Results: one :class:`~jsonbench.dataset.measurement.Measurement` per metric, staged per task
(:mod:`~jsonbench.dataset.staging`), published into the hive-partitioned Parquet dataset in one atomic step
(:mod:`~jsonbench.dataset.publish`) with the tidy schema of :mod:`~jsonbench.dataset.schema`."""
