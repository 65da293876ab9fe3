"""Is a Docker engine here, with the images a test needs? (Shared by the Docker tests.)

A Docker test runs when an engine answers and its images are built (``./bin/setup --docker``; ``./bin/test``'s
Docker tier, ``--tier docker``, ``--all`` or CI, does that itself, and then sets ``JSONBENCH_DOCKER=1``). With
``JSONBENCH_DOCKER=1`` a missing engine or image fails the test instead of skipping it: the test was asked for.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def docker_answers() -> bool:
    try:
        return subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def image_exists(tag: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True).returncode == 0


def require_docker(*images: str) -> None:
    """Skip (or fail, when JSONBENCH_DOCKER=1 asked for Docker) unless the engine answers and the images exist."""
    asked = os.environ.get("JSONBENCH_DOCKER") == "1"
    problem = None
    if not docker_answers():
        problem = "no Docker engine answers (./bin/setup --docker installs and starts one)"
    else:
        missing = [t for t in images if not image_exists(t)]
        if missing:
            problem = f"images not built: {missing} (./bin/setup --docker builds them)"
    if problem:
        if asked:
            pytest.fail(problem)
        pytest.skip(problem)
