"""Facts about the machine a measurement was taken on, and the project revision that took it."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from functools import lru_cache
from typing import Any

from jsonbench import paths


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_bytes() -> int:
    """Physical memory of this machine, in bytes."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 0


@lru_cache(maxsize=1)
def host_facts() -> dict[str, Any]:
    """CPU model, usable cores, memory, kernel and host name of the current machine."""
    return {
        "host_name": socket.gethostname(),
        "host_cpu_model": _cpu_model(),
        "host_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0,
        "host_memory_bytes": memory_bytes(),
        "host_kernel": f"{platform.system()} {platform.release()} {platform.machine()}",
    }


@lru_cache(maxsize=1)
def git_revision() -> str:
    """The project's git revision (with ``-dirty`` when the tree has changes), or ``$JSONBENCH_GIT_REVISION``."""
    if os.environ.get("JSONBENCH_GIT_REVISION"):
        return os.environ["JSONBENCH_GIT_REVISION"]
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=paths.PROJECT_ROOT, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=paths.PROJECT_ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
