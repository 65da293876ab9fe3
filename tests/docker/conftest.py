"""Tests under tests/docker/ need a Docker engine and the images of ./bin/setup --docker.

All carry the marker ``docker``; the Compose stack test also ``stack``, which ./bin/test leaves out (``-m "not stack"``):
it is the benchmark command ``./bin/stack selftest``. The engine is up before this session starts (./bin/test runs
bin/setup-docker first), so tests that need it (and would race its install in the other tier) live here.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = str(item.fspath)
        if "/tests/docker/" in path:
            item.add_marker(pytest.mark.docker)
            if path.endswith("test_compose_stack.py"):
                item.add_marker(pytest.mark.stack)
