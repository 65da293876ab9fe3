"""What a test session started and left behind: processes, SysV shared memory, sockets, scratch folders, containers.

PostgreSQL's children rewrite their command lines ("postgres: checkpointer"), a postmaster killed with
-9 leaves its shared memory segment and maybe orphaned children re-parented to init, and a data
folder can be removed under a live process: matching command lines against the scratch folder sees
none of that. A process belongs to this session when

* its environment carries the session's token (``JSONBENCH_TEST_SESSION``, set for the whole session
  and inherited by everything it starts: Airflow, task processes, pg_ctl, postmasters, their
  children, SQLite workers), or
* its working folder, executable or command line lies under the session's scratch folder (a
  postmaster's working folder is its data folder, even once deleted), or
* its parent belongs to this session.

A host lease (``engine.lease`` in the session's lease folder) still there is a leak too.
A SysV shared memory segment belongs to this session when a process of the session created it or
mapped it, or a ``postmaster.pid`` under the scratch folder named it; a background sampler records
those while the processes live, because after a kill -9 only the segment is left. A creator is known
by its pid and start time, never by its pid alone: over a half-hour session pids wrap (``pid_max`` is
32768 here), and a later server of another session (the other xdist worker, the Docker tier) can get
the pid of one of ours. A dead creator's segment is ours only when it was made while that process of
ours lived (its ``ctime`` between the process's start and the last time the sampler saw it). Sockets are
socket files under the scratch folder and bound unix sockets whose path lies there; containers are
those (labelled ``io.jsonbench.managed`` or ``io.jsonbench.workdir``) whose ``io.jsonbench.workdir``
label lies under the scratch folder. Other users of the machine (other sessions, other helpers'
servers) are never counted and never touched.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOKEN_VAR = "JSONBENCH_TEST_SESSION"
#: The session's host lease folder, inside the scratch folder (``$JSONBENCH_HOST_LOCK_DIR``): not a leak itself, its lease is.
LEASE_DIR = ".host-lease"
LEASE_FILE = "engine.lease"
CONTAINER_LABELS = ("io.jsonbench.managed", "io.jsonbench.workdir")
SAMPLE_EVERY_S = 0.5


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    start: int  # clock ticks since boot: with the pid, identifies a process across pid reuse
    uid: int
    state: str
    exe: str
    cwd: str
    cmd: str


@dataclass(frozen=True)
class Leak:
    kind: str  # process | shm | socket | scratch | container
    key: str  # identity used to diff snapshots
    text: str


def _read(path: str, binary: bool = False) -> Any:
    with open(path, "rb" if binary else "r") as fh:
        return fh.read()


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _proc(pid: int) -> Proc | None:
    base = f"/proc/{pid}"
    try:
        stat_text = _read(f"{base}/stat")
        rest = stat_text.rsplit(")", 1)[1].split()
        uid = os.stat(base).st_uid
        cmd = _read(f"{base}/cmdline", True).replace(b"\0", b" ").decode(errors="replace").strip()
    except (OSError, IndexError):
        return None
    return Proc(pid, int(rest[1]), int(rest[19]), uid, rest[0], _link(f"{base}/exe"), _link(f"{base}/cwd"), cmd)


def _environ_has(pid: int, needle: bytes) -> bool:
    try:
        return needle in _read(f"/proc/{pid}/environ", True).split(b"\0")
    except OSError:
        return False


def _under(path: str, folder: str) -> bool:
    path = path.removesuffix(" (deleted)")
    return path == folder or path.startswith(folder + "/")


@dataclass
class Tracker:
    """The session's view of what it started; ``leaks()`` lists what is there now, ``reap()`` removes it."""

    scratch: Path
    token: str
    lease_dir: Path | None = None
    bench_uids: set[int] = field(default_factory=set)
    _ours_by_env: dict[tuple[int, int], bool] = field(default_factory=dict)
    #: Every process of the session the sampler saw, by (pid, start ticks): when it was last seen alive (epoch seconds).
    seen_procs: dict[tuple[int, int], float] = field(default_factory=dict)
    seen_shmids: set[int] = field(default_factory=set)
    baseline_shmids: set[int] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _docker: Any = None
    _docker_checked: bool = False

    def __post_init__(self) -> None:
        self.baseline_shmids = {int(seg["shmid"]) for seg in self._segments()}
        name = os.environ.get("JSONBENCH_PG_OS_USER", "postgres")
        try:
            self.bench_uids = {pwd.getpwnam(name).pw_uid}
        except KeyError:
            self.bench_uids = set()

    # -- sampling ------------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._sample_forever, name="leak-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _sample_forever(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            try:
                self.sample()
            except Exception:  # a sampler must never take the session down
                pass

    def sample(self) -> dict[int, Proc]:
        """Record this session's live processes and the shared memory they hold; return them."""
        ours = self.processes()
        shmids: set[int] = set()
        for p in ours.values():
            if os.path.basename(p.exe.removesuffix(" (deleted)")) == "postgres":
                shmids |= _mapped_shmids(p.pid)
        shmids |= self._postmaster_pid_shmids()
        now = time.time()
        with self._lock:
            self.seen_procs.update({(p.pid, p.start): now for p in ours.values()})
            self.seen_shmids |= shmids
        return ours

    def _postmaster_pid_shmids(self) -> set[int]:
        """Shared memory ids named in ``postmaster.pid`` files under the scratch folder (line 7: key and id)."""
        found: set[int] = set()
        root = str(self.scratch)
        for dirpath, dirnames, filenames in os.walk(root):
            if dirpath.count("/") - root.count("/") >= 3:
                dirnames[:] = []
            if "postmaster.pid" in filenames:
                try:
                    lines = _read(os.path.join(dirpath, "postmaster.pid")).splitlines()
                    found.add(int(lines[6].split()[1]))
                except (OSError, IndexError, ValueError):
                    pass
        return found

    # -- what is there now ---------------------------------------------------------------------------

    def processes(self) -> dict[int, Proc]:
        """Live (non-zombie) processes of this session, by pid."""
        table: dict[int, Proc] = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                p = _proc(int(name))
                if p is not None:
                    table[p.pid] = p
        me = os.getpid()
        exclude = set()
        cur = me
        while cur > 1 and cur in table:  # pytest itself and whatever started it
            exclude.add(cur)
            cur = table[cur].ppid
        # multiprocessing's resource tracker: started once per interpreter by the first spawn-context
        # process (tests of concurrent checks), a child of pytest that lives exactly as long as pytest.
        tracker = "from multiprocessing.resource_tracker import main"
        exclude |= {p.pid for p in table.values() if p.ppid == me and tracker in p.cmd}
        needle = f"{TOKEN_VAR}={self.token}".encode()
        scratch = str(self.scratch)
        ours: set[int] = set()
        for p in table.values():
            if p.pid in exclude or p.state == "Z":
                continue
            key = (p.pid, p.start)
            by_env = self._ours_by_env.get(key)
            if by_env is None:
                by_env = self._ours_by_env[key] = _environ_has(p.pid, needle)
            if by_env or _under(p.cwd, scratch) or _under(p.exe, scratch) or scratch in p.cmd:
                ours.add(p.pid)
        children: dict[int, list[int]] = {}
        for p in table.values():
            children.setdefault(p.ppid, []).append(p.pid)
        todo = list(ours)
        while todo:
            for child in children.get(todo.pop(), []):
                if child not in ours and child not in exclude and table[child].state != "Z":
                    ours.add(child)
                    todo.append(child)
        return {pid: table[pid] for pid in ours}

    def _segments(self) -> list[dict[str, str]]:
        try:
            lines = _read("/proc/sysvipc/shm").splitlines()
        except OSError:
            return []
        header = lines[0].split()
        return [dict(zip(header, line.split(), strict=False)) for line in lines[1:] if line.strip()]

    def segments(self, live: dict[int, Proc] | None = None) -> list[dict[str, str]]:
        """SysV shared memory segments this session created or used."""
        live = self.sample() if live is None else live
        with self._lock:
            shmids, seen = set(self.seen_shmids), dict(self.seen_procs)
        seen.update({(p.pid, p.start): time.time() for p in live.values()})
        out = []
        for seg in self._segments():
            shmid = int(seg["shmid"])
            if shmid in shmids or (shmid not in self.baseline_shmids and _created_by(seg, seen)):
                out.append(seg)
        return out

    def sockets(self) -> list[str]:
        """Socket files under the scratch folder, and bound unix sockets whose path lies there."""
        scratch = str(self.scratch)
        found: set[str] = set()
        for dirpath, _, filenames in os.walk(scratch):
            for name in filenames:
                path = os.path.join(dirpath, name)
                try:
                    if stat.S_ISSOCK(os.lstat(path).st_mode):
                        found.add(path)
                except OSError:
                    pass
        try:
            for line in _read("/proc/net/unix").splitlines()[1:]:
                parts = line.split()
                if len(parts) >= 8 and _under(parts[7], scratch):
                    found.add(parts[7])
        except OSError:
            pass
        return sorted(found)

    def scratch_entries(self) -> list[str]:
        try:
            return sorted(str(p) for p in self.scratch.iterdir() if p != self.lease_dir)
        except OSError:
            return []

    def leases(self) -> list[str]:
        """A host lease still held in this session's lease folder (teardown or the sweep releases it)."""
        if self.lease_dir is None:
            return []
        lease = self.lease_dir / LEASE_FILE
        return [str(lease)] if lease.exists() else []

    def _docker_client(self) -> Any:
        if self._docker_checked:
            return self._docker
        self._docker_checked = True
        host = os.environ.get("DOCKER_HOST", "")
        if not host and not os.path.exists("/var/run/docker.sock"):
            return None
        try:
            import docker

            client = docker.DockerClient(base_url=host or "unix:///var/run/docker.sock", timeout=10)
            client.ping()
            self._docker = client
        except Exception:
            self._docker = None
        return self._docker

    def containers(self) -> list[tuple[str, str, str]]:
        """``(id, name, workdir label)`` of containers this session's engines created."""
        client = self._docker_client()
        if client is None:
            return []
        found: dict[str, tuple[str, str, str]] = {}
        for label in CONTAINER_LABELS:
            try:
                listed = client.containers.list(all=True, filters={"label": label})
            except Exception:
                return list(found.values())
            for c in listed:
                workdir = (c.labels or {}).get("io.jsonbench.workdir", "")
                if _under(workdir, str(self.scratch)):
                    found[c.id] = (c.id, c.name, workdir)
        return list(found.values())

    def leaks(self) -> list[Leak]:
        """Everything of this session that exists right now."""
        live = self.sample()
        out: list[Leak] = []
        for p in sorted(live.values(), key=lambda p: p.pid):
            out.append(
                Leak(
                    "process",
                    f"{p.pid}:{p.start}",
                    f"process {p.pid} (user {_user(p.uid)}, parent {p.ppid}) exe {p.exe or '?'} cwd {p.cwd or '?'}: {p.cmd}",
                )
            )
        for seg in self.segments(live):
            out.append(
                Leak(
                    "shm",
                    seg["shmid"],
                    f"SysV shared memory id {seg['shmid']} key {seg['key']} (owner {_user(int(seg['uid']))}, "
                    f"{seg['size']} bytes, created by pid {seg['cpid']}, {seg['nattch']} attached)",
                )
            )
        for path in self.sockets():
            out.append(Leak("socket", path, f"unix socket {path}"))
        for path in self.scratch_entries():
            out.append(Leak("scratch", path, f"scratch folder entry {path}"))
        for path in self.leases():
            try:
                holder = _read(path).strip()
            except OSError:
                holder = "?"
            out.append(Leak("lease", path, f"host lease {path} still held: {holder}"))
        for cid, name, workdir in self.containers():
            out.append(Leak("container", cid, f"container {name} ({cid[:12]}) for {workdir}"))
        return out

    def new_since(self, baseline: Iterable[Leak], wait_s: float = 0.0) -> list[Leak]:
        """Leaks not in ``baseline``, waiting up to ``wait_s`` for exiting processes and their leftovers to go."""
        before = {(b.kind, b.key) for b in baseline}
        deadline = time.monotonic() + wait_s
        while True:
            new = [leak for leak in self.leaks() if (leak.kind, leak.key) not in before]
            if not new or time.monotonic() >= deadline:
                return new
            time.sleep(0.2)

    # -- clean-up --------------------------------------------------------------------------------------

    def reap(self, leaks: Iterable[Leak]) -> list[str]:
        """Remove what was found (processes killed, segments, containers and scratch entries removed); say what failed."""
        leaks = list(leaks)
        problems: list[str] = []
        pids = [int(leak.key.split(":")[0]) for leak in leaks if leak.kind == "process"]
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
            time.sleep(0.1)
        problems += [f"process {pid} survived SIGKILL" for pid in pids if _alive(pid)]
        for leak in leaks:
            if leak.kind == "shm":
                res = subprocess.run(["ipcrm", "-m", leak.key], capture_output=True, text=True)
                if res.returncode != 0:
                    problems.append(f"ipcrm -m {leak.key}: {res.stderr.strip()}")
            elif leak.kind == "container":
                client = self._docker_client()
                try:
                    client.containers.get(leak.key).remove(force=True, v=True)
                except Exception as exc:
                    problems.append(f"container {leak.key}: {exc}")
            elif leak.kind in ("scratch", "socket", "lease"):
                path = Path(leak.key)
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
        return problems


def _created_by(seg: dict[str, str], seen: dict[tuple[int, int], float]) -> bool:
    """Whether a process in ``seen`` ((pid, start ticks) -> last seen alive) made the segment, not merely one with its pid.

    A live creator must be the very process seen (same start). A dead one must have lived when the segment was
    made: its ``ctime`` (whole seconds; postgres never changes a segment's permissions, so it is the creation
    unless the segment was already marked for removal) lies between that process's start and one sampling
    interval after it was last seen.
    """
    cpid = int(seg["cpid"])
    starts = {start: last for (pid, start), last in seen.items() if pid == cpid}
    if not starts:
        return False
    now = _proc(cpid)
    if now is not None and now.state != "Z":
        return now.start in starts
    ctime = int(seg["ctime"])
    return any(_start_epoch(start) - 1 <= ctime <= last + SAMPLE_EVERY_S + 1 for start, last in starts.items())


def _start_epoch(start_ticks: int) -> float:
    """A process's start (``/proc/<pid>/stat`` field 22, clock ticks since boot) in epoch seconds."""
    return _boot_time() + start_ticks / os.sysconf("SC_CLK_TCK")


def _boot_time() -> int:
    for line in _read("/proc/stat").splitlines():
        if line.startswith("btime "):
            return int(line.split()[1])
    raise RuntimeError("/proc/stat has no btime line")


def _alive(pid: int) -> bool:
    try:
        return _read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _mapped_shmids(pid: int) -> set[int]:
    """SysV segments a process has mapped (``/SYSV<key>`` lines of its maps; the inode field is the shmid)."""
    found: set[int] = set()
    try:
        for line in _read(f"/proc/{pid}/maps").splitlines():
            if "/SYSV" in line:
                parts = line.split()
                found.add(int(parts[4]))
    except (OSError, IndexError, ValueError):
        pass
    return found
