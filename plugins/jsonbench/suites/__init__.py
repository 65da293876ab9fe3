"""Benchmark suites, one module each. The contract is documented in :mod:`jsonbench.suites.base`.

Importing this package is cheap (no database drivers), because the DAG file reads the suites'
workload names at parse time to create one task per workload.
"""

from __future__ import annotations

import importlib

from jsonbench.suites.base import Suite

#: suite name -> "module:Class". Add a suite by adding a line here and a block in include/matrix.yaml.
SUITES: dict[str, str] = {
    "large_document_update": "jsonbench.suites.large_document_update:LargeDocumentUpdate",
    "catalogue": "jsonbench.suites.catalogue:Catalogue",
    "json_vs_jsonb": "jsonbench.suites.json_vs_jsonb:JsonVsJsonb",
    "sqlite_jsonb": "jsonbench.suites.sqlite_jsonb:SqliteJsonb",
}


def get_suite(name: str) -> Suite:
    """An instance of the named suite."""
    try:
        target = SUITES[name]
    except KeyError:
        raise KeyError(f"unknown suite {name!r}; known: {', '.join(sorted(SUITES))}") from None
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)()
