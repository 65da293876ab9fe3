"""What a PostgreSQL cluster leaves in the operating system when its postmaster dies hard, and how to remove it.

A postmaster killed with -9 (a crashed host process, the OOM killer, a person) cannot clean up:

* its children (backends, the checkpointer, the WAL writer, ...) may run on, re-parented to init,
  with command lines like ``postgres: bench bench [local] UPDATE`` that name no folder; a backend
  busy computing notices its postmaster's death only at its next wait, so it may keep a core busy
  for as long as its statement runs. They are found by what cannot be rewritten: their executable
  is a ``postgres`` binary and their working folder is the cluster's data folder.
* its System V shared memory segment (a small one, 56 bytes on 64-bit Linux: PostgreSQL's
  ``PGShmemHeader``) stays until someone removes it. ``postmaster.pid`` names it (line 7: key and
  id), and PostgreSQL derives its key from the data folder's inode number (the first free key from
  ``st_ino`` upwards), writing the folder's device and inode into the header: so a segment is found
  from the lock file, or by key and then proven to be this folder's by its header.

:func:`clean_up_after` does both, and must run before the data folder is removed (it reads the lock
file and the folder's inode).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import struct
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

#: ``PGShmemHeader.magic`` (src/include/storage/pg_shmem.h).
PG_SHMEM_MAGIC = 679834894
#: How many keys above the data folder's inode PostgreSQL may have tried before finding a free one.
KEY_PROBE = 64
IPC_RMID = 0
SHM_RDONLY = 0o10000


@dataclass(frozen=True)
class Segment:
    shmid: int
    key: int
    cpid: int
    nattch: int
    uid: int


def segments() -> list[Segment]:
    """Every SysV shared memory segment of the machine (``/proc/sysvipc/shm``)."""
    try:
        lines = Path("/proc/sysvipc/shm").read_text().splitlines()
    except OSError:
        return []
    header = lines[0].split()
    out = []
    for line in lines[1:]:
        row = dict(zip(header, line.split(), strict=False))
        try:
            out.append(Segment(int(row["shmid"]), int(row["key"]), int(row["cpid"]), int(row["nattch"]), int(row["uid"])))
        except (KeyError, ValueError):
            continue
    return out


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    libc.shmdt.argtypes = [ctypes.c_void_p]
    libc.shmctl.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    return libc


def header_names(shmid: int, device: int, inode: int) -> bool:
    """True when segment ``shmid`` is a PostgreSQL header written for the data folder (``device``, ``inode``)."""
    libc = _libc()
    addr = libc.shmat(shmid, None, SHM_RDONLY)
    if addr in (None, ctypes.c_void_p(-1).value):
        return False
    try:
        raw = ctypes.string_at(addr, 56)
    finally:
        libc.shmdt(addr)
    magic: int = struct.unpack_from("=i", raw, 0)[0]
    dev, ino = struct.unpack_from("=QQ", raw, 40)
    return bool(magic == PG_SHMEM_MAGIC and dev == device and ino == inode)


def remove_segment(shmid: int) -> bool:
    """``IPC_RMID`` (the segment goes once nobody has it attached); False when it was already gone or not ours."""
    if _libc().shmctl(shmid, IPC_RMID, None) != 0:
        err = ctypes.get_errno()
        if err not in (22, 43):  # EINVAL, EIDRM: already gone
            log.warning("could not remove shared memory segment %d: %s", shmid, os.strerror(err))
        return False
    return True


def _lock_file_segment(data: Path) -> tuple[int | None, int | None, int | None]:
    """``(postmaster pid, shm key, shm id)`` from ``postmaster.pid`` (None for what it does not say)."""
    try:
        lines = (data / "postmaster.pid").read_text().splitlines()
    except OSError:
        return None, None, None
    pid = int(lines[0]) if lines and lines[0].strip().isdigit() else None
    key = shmid = None
    if len(lines) > 6:
        parts = lines[6].split()
        if len(parts) == 2 and all(p.lstrip("-").isdigit() for p in parts):
            key, shmid = int(parts[0]), int(parts[1])
    return pid, key, shmid


def segments_of(data: Path, postmaster_pid: int | None = None) -> list[int]:
    """Ids of the SysV segments that belong to the cluster in ``data`` (its lock file, its creator, or its key and header)."""
    lock_pid, key, shmid = _lock_file_segment(data)
    pids = {p for p in (lock_pid, postmaster_pid) if p}
    device: int | None = None
    inode: int | None = None
    try:
        st = os.stat(data)
        device, inode = st.st_dev, st.st_ino
    except OSError:
        pass
    found: set[int] = set()
    for seg in segments():
        if shmid is not None and seg.shmid == shmid and seg.key == key:
            found.add(seg.shmid)
        elif seg.cpid in pids and seg.nattch == 0 and not _alive(seg.cpid):
            found.add(seg.shmid)  # made by this cluster's postmaster, now dead (a live process with a reused pid is not it)
        elif inode is not None and device is not None and 0 <= ((seg.key & 0xFFFFFFFF) - (inode & 0xFFFFFFFF)) < KEY_PROBE:
            if header_names(seg.shmid, device, inode):
                found.add(seg.shmid)
    return sorted(found)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def processes_in(data: Path) -> list[int]:
    """Live ``postgres`` processes working in ``data`` (a postmaster and its children, orphaned or not)."""
    target = str(data.resolve())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.path.basename(os.readlink(f"/proc/{entry}/exe").removesuffix(" (deleted)")) != "postgres":
                continue
            if os.readlink(f"/proc/{entry}/cwd").removesuffix(" (deleted)") != target:
                continue
            if Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
        except (OSError, IndexError):
            continue
        found.append(int(entry))
    return found


def clean_up_after(data: Path, postmaster_pid: int | None = None, wait_s: float = 10.0) -> dict[str, list[int]]:
    """Kill whatever ``postgres`` process still works in ``data`` and remove the cluster's SysV segments.

    Call it after the postmaster was stopped (or found dead) and before ``data`` is removed. Returns
    what it killed and removed. Segments are looked up before the processes are killed (the lock
    file and the folder's inode are what identify them) and removed after.
    """
    shmids = segments_of(data, postmaster_pid)
    killed = processes_in(data)
    for pid in killed:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + wait_s
    while processes_in(data) and time.monotonic() < deadline:
        time.sleep(0.05)
    removed = [s for s in shmids if remove_segment(s)]
    if killed or removed:
        log.warning(
            "after the postmaster of %s: killed %d leftover postgres process(es) %s, removed shared memory segment(s) %s",
            data,
            len(killed),
            killed,
            removed,
        )
    return {"killed": killed, "removed_shm": removed}
