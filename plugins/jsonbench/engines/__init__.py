"""Engine adapters. The contract is documented in :mod:`jsonbench.engines.base`."""

from __future__ import annotations

import importlib

#: Modules that register an adapter when imported. Add a backend by adding its module here.
ADAPTER_MODULES = (
    "jsonbench.engines.postgres_embedded",
    "jsonbench.engines.sqlite_apsw",
    "jsonbench.engines.postgres_docker",
    "jsonbench.engines.postgres_server",
)


def load_adapters() -> None:
    """Import every adapter module so that it registers itself (idempotent)."""
    for name in ADAPTER_MODULES:
        importlib.import_module(name)
