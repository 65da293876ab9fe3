"""The documents suites: the seeds' experiments on a user's own JSON documents.

* :mod:`.input`: the input scanned in pure Python before any engine starts (errors name the file, line
  and field) into a plan: :mod:`.read` reads, checks and fingerprints the documents, :mod:`.profile`
  finds the keys to read and update and the typed twin's columns, :mod:`.plan` is what the scan returns;
* :mod:`.postgres`: suite ``documents`` (json vs jsonb vs columns on PostgreSQL: storage, reads, updates);
* :mod:`.sqlite`: suite ``documents_sqlite`` (text vs JSONB vs columns on SQLite);
* :mod:`.summary`: the answer in sentences, per input and engine version, from the published rows.

Importing this package is cheap (no database driver): the DAG reads the suites' workloads at parse time.
"""
