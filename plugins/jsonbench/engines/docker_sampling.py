"""What the driver samples of a cell's running container: its processes, CPU time, memory and disk.

Read from the cgroup file system when this host sees it (microseconds a reading), else from the
Docker engine (``docker top``, one stats call of about a second, ``du`` inside the container at most
every :data:`DU_EVERY_S`). A sampler must never fail a measurement, so every reading that cannot be
made is empty or zero rather than an error.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jsonbench.engines.docker_container import DockerHandle

#: How often the disk usage is measured with ``du`` inside the container (when the volume is not visible here).
DU_EVERY_S = 10.0


class ContainerGauge:
    """The readings of one adapter's containers, through its Docker client (asked for at each reading: it may be unreachable)."""

    def __init__(self, client: Callable[[], Any]) -> None:
        self.client = client
        self._du: tuple[float, int] = (0.0, 0)  # (when, bytes) of the last du inside the container

    def _stats(self, handle: DockerHandle) -> dict[str, Any] | None:
        """One stats reading of the container from the engine (about a second), or None when it is not running."""
        try:
            return dict(self.client().api.stats(handle.container_id or handle.container, stream=False, one_shot=True))
        except Exception:  # a sampler must never fail a measurement
            return None

    def _cgroup(self, handle: DockerHandle, controller: str) -> Path | None:
        """The container's cgroup folder of one controller, when this host can read it (else None: ask the engine).

        The cgroup file system is ``$JSONBENCH_HOST_CGROUP`` (docker-compose.yaml mounts the host's there for the
        benchmark workers) or ``/sys/fs/cgroup``; cgroup v1 with the cgroupfs or systemd driver, or v2.
        """
        cid = handle.container_id
        if not cid:
            return None
        root = Path(os.environ.get("JSONBENCH_HOST_CGROUP") or "/sys/fs/cgroup")
        v1 = {"cpu": ("cpuacct", "cpu,cpuacct"), "memory": ("memory",)}[controller]
        for sub in (f"docker/{cid}", f"system.slice/docker-{cid}.scope"):
            for folder in [*(root / c / sub for c in v1), root / sub]:  # v1 controllers, then v2's unified tree
                if folder.is_dir():
                    return folder
        return None

    def pids(self, handle: DockerHandle) -> list[int]:
        """The container's processes as host pids (``docker top``: the server, its children, pgbench while it runs)."""
        try:
            top = self.client().api.top(handle.container_id or handle.container, ps_args="-o pid")
        except Exception:  # not running, or gone
            return []
        titles = [t.upper() for t in top.get("Titles") or []]
        col = titles.index("PID") if "PID" in titles else 0
        return [int(row[col]) for row in top.get("Processes") or [] if str(row[col]).isdigit()]

    def cpu_seconds(self, handle: DockerHandle) -> float | None:
        """CPU time of the container's cgroup: every process it ran, pgbench's exec'd runs and exited ones included.

        Read from the cgroup file system when this host sees it (microseconds), else from the engine's stats
        (about a second). Counting per process instead would miss pgbench: it runs in the container but is
        nobody's child there, so its CPU would show up as other load.
        """
        folder = self._cgroup(handle, "cpu")
        if folder is not None:
            try:
                if (folder / "cpuacct.usage").exists():
                    return int((folder / "cpuacct.usage").read_text()) / 1e9
                for line in (folder / "cpu.stat").read_text().splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
            except (OSError, ValueError):
                pass
        stats = self._stats(handle)
        total = (((stats or {}).get("cpu_stats") or {}).get("cpu_usage") or {}).get("total_usage")
        return float(total) / 1e9 if total else None

    def memory_bytes(self, handle: DockerHandle) -> int:
        """Memory of the container's cgroup without its inactive page cache (what ``docker stats`` shows)."""
        folder = self._cgroup(handle, "memory")
        if folder is not None:
            try:
                v1 = (folder / "memory.usage_in_bytes").exists()
                used = int((folder / ("memory.usage_in_bytes" if v1 else "memory.current")).read_text())
                detail = dict(line.split() for line in (folder / "memory.stat").read_text().splitlines() if len(line.split()) == 2)
                return max(used - int(detail.get("total_inactive_file" if v1 else "inactive_file", 0)), 0)
            except (OSError, ValueError):
                pass
        stats = (self._stats(handle) or {}).get("memory_stats") or {}
        detail = stats.get("stats") or {}
        cache = detail.get("total_inactive_file", detail.get("inactive_file", 0)) or 0
        return max(int(stats.get("usage") or 0) - int(cache), 0)

    def disk_bytes(self, handle: DockerHandle) -> int:
        """Bytes of the data volume: read where it lies when this host sees it, else ``du`` inside the container (at most every DU_EVERY_S)."""
        from jsonbench.host.load import folder_bytes

        try:
            container = self.client().containers.get(handle.container_id or handle.container)
        except Exception:
            return 0
        sources = [Path(m["Source"]) for m in container.attrs.get("Mounts") or [] if m.get("Type") == "volume" and m.get("Source")]
        visible = [p for p in sources if os.access(p, os.R_OK | os.X_OK)]
        if visible:
            return sum(folder_bytes(p) for p in visible)
        when, size = self._du
        if time.monotonic() - when < DU_EVERY_S or container.status != "running":
            return size
        dests = [m["Destination"] for m in container.attrs.get("Mounts") or [] if m.get("Type") == "volume" and m.get("Destination")]
        res = container.exec_run(["du", "-s", "-B1", *dests], user="postgres") if dests else None
        if res is not None and res.exit_code == 0:
            size = sum(
                int(line.split()[0])
                for line in res.output.decode(errors="replace").splitlines()
                if line.split() and line.split()[0].isdigit()
            )
        self._du = (time.monotonic(), size)
        return size
