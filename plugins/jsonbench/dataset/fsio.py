"""Durable file-system steps shared by publishing, sweeping and quarantining.

* :func:`write_text_atomic` writes a file whole or not at all (a temporary file, synced, renamed into
  place): a reader sees the old file or the new one, never half of one;
* :func:`fsync_dir` makes a rename or a new entry in a folder survive a crash (POSIX only promises it
  once the folder itself is synced);
* :func:`make_dirs` creates the missing folders of a path, syncing each parent that gained one;
* :func:`dataset_lock` is a lock file at the results root: publishers hold it shared (many runs
  publish at once, each into its own folder), the sweep and the quarantine hold it exclusive, so
  they never take a publish's temporary file for a leftover, even from another process;
* :func:`is_disk_full` / :func:`disk_full_error` turn "no space" from any layer (Python, pyarrow)
  into one error that names the file and the filesystem that is full.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = ".jsonbench-dataset.lock"
#: How long the sweep or the quarantine waits for running publishes to finish before giving up.
EXCLUSIVE_WAIT_S = 600.0


def write_text_atomic(path: Path, text: str, what: str = "file") -> None:
    """Write ``text`` to ``path`` through a hidden temporary file beside it, synced and renamed into place.

    The folder is created when missing. A full disk raises :func:`disk_full_error` naming ``what``
    and the file; the temporary file never stays behind.
    """
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        tmp = None
        fsync_dir(path.parent)
    except BaseException as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if is_disk_full(exc):
            raise disk_full_error(what, path, exc) from exc
        raise


def fsync_dir(path: str | Path) -> None:
    """Flush a folder's entries (new names, renames, removals) to disk."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path: Path) -> list[Path]:
    """``mkdir -p path``, durably: every parent that gains a folder is synced. Returns the folders this call created."""
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    created: list[Path] = []
    for folder in reversed(missing):
        try:
            folder.mkdir()
            created.append(folder)
        except FileExistsError:
            pass  # another publisher made it first
        fsync_dir(folder.parent)
    return created


@contextmanager
def dataset_lock(results_root: str | Path, exclusive: bool = False, wait_s: float | None = None) -> Iterator[None]:
    """Hold the results folder's dataset lock (shared for publishing, exclusive for sweep and quarantine).

    ``wait_s`` bounds the wait (``TimeoutError`` naming the lock file); None waits as long as it takes.
    """
    root = Path(results_root)
    make_dirs(root)
    lock_path = root / LOCK_NAME
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        if wait_s is None:
            fcntl.flock(fd, mode)
        else:
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(f"{lock_path} is still held after {wait_s:.0f} s (a publish is running or hung)") from None
                    time.sleep(0.2)
        yield
    finally:
        os.close(fd)


def is_disk_full(exc: BaseException) -> bool:
    """True for "no space left" / "quota exceeded", whichever layer raised it (pyarrow keeps only the text)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        text = str(cur)
        if "No space left on device" in text or "Disk quota exceeded" in text:
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def mount_point(path: str | Path) -> Path:
    """The mount point of the filesystem holding ``path`` (its nearest existing ancestor)."""
    p = Path(path).absolute()
    while not p.exists():
        p = p.parent
    while not os.path.ismount(p):
        p = p.parent
    return p


def disk_full_error(what: str, path: str | Path, exc: BaseException) -> OSError:
    """An ``OSError(ENOSPC)`` saying what could not be written, where, and which filesystem is full."""
    mount = mount_point(path)
    try:
        usage = shutil.disk_usage(mount)
        space = f"{usage.free} of {usage.total} bytes free"
    except OSError:
        space = "free space unknown"
    return OSError(
        errno.ENOSPC,
        f"No space left on device: {what} {path} failed, the filesystem mounted at {mount} is full "
        f"({space} once the partial file was removed); nothing of this attempt is visible and earlier runs are "
        f"untouched: free space there and run it again ({exc})",
    )
