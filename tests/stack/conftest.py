"""Tests under tests/stack/ carry the marker ``stack`` (select or leave them out with ``-m``)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/stack/" in str(item.fspath):
            item.add_marker(pytest.mark.stack)
