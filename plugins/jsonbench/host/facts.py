"""Facts about the machine a measurement was taken on, and the project revision that took it.

The host name of these machines is the same on every one (``vm``), so a host is told apart by
its kernel's ``boot_id`` (new at every boot: a fresh machine, or the same one restarted) and machine id. A CPU
quota on this process's cgroup (cgroup v1 ``cpu.cfs_quota_us``, or v2 ``cpu.max``: how a slower host
is simulated) is recorded as the cores it allows, so no row measured under a quota passes for one
measured at the machine's full speed.
"""

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


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def boot_id() -> str:
    """The kernel's ``boot_id``: different on every machine and every boot."""
    return _read("/proc/sys/kernel/random/boot_id")


def machine_id() -> str:
    """The systemd/D-Bus machine id, when the machine has one."""
    return _read("/etc/machine-id") or _read("/var/lib/dbus/machine-id")


def cpu_quota_cores(cgroup_file: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup") -> float | None:
    """The cores this process's cgroup quota allows (``cfs_quota_us / cfs_period_us``), None when unlimited."""
    for line in _read(cgroup_file).splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hier, controllers, path = parts
        if "cpu" in controllers.split(","):  # cgroup v1
            base = f"{root}/{controllers}{path}" if os.path.isdir(f"{root}/{controllers}") else f"{root}/cpu{path}"
            quota, period = _read(f"{base}/cpu.cfs_quota_us"), _read(f"{base}/cpu.cfs_period_us")
            if quota and period and int(quota) > 0 and int(period) > 0:
                return int(quota) / int(period)
            return None
        if hier == "0" and controllers == "":  # cgroup v2: cpu.max is "<quota|max> <period>"
            got = _read(f"{root}{path}/cpu.max").split()
            if len(got) == 2 and got[0] != "max":
                return int(got[0]) / int(got[1])
    return None


@lru_cache(maxsize=1)
def host_facts() -> dict[str, Any]:
    """CPU model, usable cores, memory, kernel, host name, boot and machine id and CPU quota of this machine."""
    return {
        "host_name": socket.gethostname(),
        "host_cpu_model": _cpu_model(),
        "host_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0,
        "host_memory_bytes": memory_bytes(),
        "host_kernel": f"{platform.system()} {platform.release()} {platform.machine()}",
        "host_boot_id": boot_id(),
        "host_machine_id": machine_id(),
        "host_cpu_quota": cpu_quota_cores(),
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
