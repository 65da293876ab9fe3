"""The project's exceptions: each says what went wrong and, where a user can fix it, which field."""

from __future__ import annotations


class BenchmarkError(Exception):
    """Base class of every error this project raises on purpose."""


class ConfigError(BenchmarkError):
    """A run parameter or the matrix file is wrong. ``field`` names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class EngineUnavailable(BenchmarkError):
    """An engine build is missing or cannot be started (the message says which and why)."""
