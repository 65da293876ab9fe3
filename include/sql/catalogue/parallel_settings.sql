-- What bounds the parallel scan's workers (recorded next to workers_launched).
SELECT current_setting('max_parallel_workers_per_gather'), current_setting('max_parallel_workers'),
       current_setting('max_worker_processes'), current_setting('min_parallel_table_scan_size')
