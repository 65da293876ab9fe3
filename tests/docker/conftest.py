"""Tests under tests/docker/ need a Docker engine and the images of ./bin/setup --docker.

All carry the marker ``docker``; the Compose stack test also ``stack`` (select or leave them out with ``-m``).
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
