"""Keeping the dataset readable by every tool: leftovers of killed publishes swept, damaged files quarantined.

**Leftovers.** A publish killed outright (kill -9, power loss) can leave, inside a run's folder, its
hidden temporary file ``.part-0.parquet.<pid>-<hex>.tmp`` (no reader sees it, but it wastes space)
and, on a first publish, a run folder holding nothing else. Earlier versions of this package renamed
whole run folders and could leave ``.tmp-run_key=...-<hex>`` and ``.old-run_key=...-<hex>`` folders
beside the runs, which DuckDB's ``**/*.parquet`` glob reads and then refuses ("Hive partition
mismatch"). :func:`sweep_leftovers` removes all of these; an ``.old-`` folder whose run is missing
(killed between its two renames) is the run's last published version and is renamed back instead.
The DAG's sweep task calls it; it waits for publishes in flight (they hold the dataset lock shared)
so it never mistakes another process's temporary file for a leftover.

**Damaged files.** :func:`quarantine` moves files that do not read whole (see
:func:`jsonbench.dataset.read.find_damaged`) to ``<results>/_quarantine/<UTC time>/<same path>``,
each with a ``.note.json`` saying where it came from, what was wrong and how to put it back. Nothing
is deleted. ``python -m jsonbench.cli damaged [--quarantine]`` is the command line.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from jsonbench.dataset.fsio import EXCLUSIVE_WAIT_S, dataset_lock, fsync_dir, make_dirs
from jsonbench.dataset.read import SCHEMAS, TMP_PREFIX, TMP_SUFFIX, DamagedFile, check_file, find_damaged

log = logging.getLogger(__name__)

QUARANTINE = "_quarantine"
_LEGACY = re.compile(r"^\.(tmp|old)-(run_key=.+)-[0-9a-f]{8}$")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _leftovers_in(date_dir: Path) -> list[tuple[Path, str]]:
    """What a killed publish left in one ``run_date=`` folder: ``(path, action)``, action ``remove`` or ``restore``."""
    found: list[tuple[Path, str]] = []
    for entry in sorted(date_dir.iterdir()):
        m = _LEGACY.match(entry.name)
        if m:
            # An .old- folder whose run is missing was that run's published version: it goes back.
            restore = m.group(1) == "old" and not (date_dir / m.group(2)).exists()
            found.append((entry, "restore" if restore else "remove"))
    found.sort(key=lambda item: item[1] != "restore")  # restore before removing the .tmp- twin
    for run_dir in sorted(date_dir.glob("run_key=*")):
        if run_dir.is_dir():
            found += [(f, "remove") for f in sorted(run_dir.iterdir()) if f.name.startswith(TMP_PREFIX) and f.name.endswith(TMP_SUFFIX)]
    return found


def _sweep_date_folder(date_dir: Path) -> list[Path]:
    """Clear one ``run_date=`` folder's leftovers, then its emptied run folders."""
    removed: list[Path] = []
    for path, action in _leftovers_in(date_dir):
        if action == "restore":
            m = _LEGACY.match(path.name)
            assert m is not None
            path.rename(date_dir / m.group(2))
            log.warning("restored %s from an interrupted publish's %s", date_dir / m.group(2), path.name)
        else:
            _remove(path)
        removed.append(path)
    touched = {p.parent for p in removed}
    for run_dir in sorted(date_dir.glob("run_key=*")):
        if run_dir.is_dir() and not any(run_dir.iterdir()):
            run_dir.rmdir()
            removed.append(run_dir)
            touched.add(date_dir)
    for folder in touched:
        if folder.exists():
            fsync_dir(folder)
    return removed


def _date_folders(root: Path) -> list[tuple[Path, Path]]:
    """``(label folder, date folder)`` of every table of the dataset."""
    out: list[tuple[Path, Path]] = []
    for table in SCHEMAS:
        for label_dir in sorted((root / table).glob("hardware_label=*")):
            out += [(label_dir, d) for d in sorted(label_dir.glob("run_date=*")) if d.is_dir()]
    return out


def find_leftovers(results_dir: str | Path) -> list[Path]:
    """What :func:`sweep_leftovers` would remove or restore, without touching anything."""
    root = Path(results_dir)
    return [path for _, date_dir in _date_folders(root) for path, _ in _leftovers_in(date_dir)]


def _prune_empty(folder: Path) -> None:
    try:
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            fsync_dir(folder.parent)
    except OSError:
        pass


def sweep_leftovers(results_dir: str | Path) -> list[Path]:
    """Remove what killed publishes left in the dataset (and migrate the older layout's swap folders).

    Returns the paths removed (or, for an ``.old-`` folder renamed back, its former path). Safe while
    other processes publish: it holds the dataset lock exclusively, waiting for them to finish.
    """
    root = Path(results_dir)
    if not root.is_dir():
        return []
    removed: list[Path] = []
    with dataset_lock(root, exclusive=True, wait_s=EXCLUSIVE_WAIT_S):
        for _, date_dir in _date_folders(root):
            removed += _sweep_date_folder(date_dir)
            _prune_empty(date_dir)
        for table in SCHEMAS:
            for label_dir in sorted((root / table).glob("hardware_label=*")):
                _prune_empty(label_dir)
    if removed:
        log.warning("swept %d leftover(s) of interrupted publishes under %s: %s", len(removed), root, ", ".join(str(p) for p in removed))
    return removed


def _batch_dir(root: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    batch = root / QUARANTINE / stamp
    n = 1
    while batch.exists():
        n += 1
        batch = root / QUARANTINE / f"{stamp}-{n}"
    return batch


def _move(src: Path, dst: Path) -> None:
    """Rename ``src`` to ``dst`` durably (copy, sync and remove when they are on different filesystems)."""
    make_dirs(dst.parent)
    try:
        os.rename(src, dst)
    except OSError as exc:
        if exc.errno != 18:  # EXDEV: the quarantine is on another filesystem
            raise
        shutil.copy2(src, dst)
        with open(dst, "rb") as fh:
            os.fsync(fh.fileno())
        src.unlink()
    fsync_dir(dst.parent)
    fsync_dir(src.parent)


def quarantine(results_dir: str | Path, damaged: Iterable[DamagedFile] | None = None) -> list[Path]:
    """Move damaged dataset files under ``<results>/_quarantine/`` with a note each; return their new paths.

    ``damaged`` defaults to every damaged file of the dataset. Each file is checked again under the
    dataset lock and left alone if it now reads (a rerun republished it meanwhile).
    """
    root = Path(results_dir)
    moved: list[Path] = []
    with dataset_lock(root, exclusive=True, wait_s=EXCLUSIVE_WAIT_S):
        todo = list(damaged) if damaged is not None else find_damaged(root)
        if not todo:
            return []
        batch = _batch_dir(root)
        for item in todo:
            src = Path(item.path)
            try:
                rel = src.relative_to(root)
            except ValueError:
                raise ValueError(f"{src} is not under the results folder {root}") from None
            table = rel.parts[0]
            if not src.exists() or table not in SCHEMAS:
                continue
            still = check_file(src, table)
            if still is None:
                log.info("%s reads now; not quarantined", src)
                continue
            dst = batch / rel
            _move(src, dst)
            note = {
                "original_path": str(src),
                "error": still.error,
                "quarantined_at": datetime.now(UTC).isoformat(),
                "why": "the file does not read whole: jsonbench's readers skipped it, and tools that read the folder wholesale "
                "(DuckDB, pandas) failed on it",
                "restore": f"mv {dst} {src}",
            }
            note_path = dst.with_name(dst.name + ".note.json")
            with open(note_path, "w", encoding="utf-8") as fh:
                json.dump(note, fh, indent=1)
                fh.flush()
                os.fsync(fh.fileno())
            fsync_dir(note_path.parent)
            log.warning("quarantined damaged dataset file %s -> %s (%s)", src, dst, still.error)
            moved.append(dst)
            run_dir = src.parent
            if run_dir.is_dir() and not any(p for p in run_dir.iterdir() if not p.name.startswith(".")):
                for p in run_dir.iterdir():
                    _remove(p)  # a hidden leftover beside the only file
                run_dir.rmdir()
                fsync_dir(run_dir.parent)
    return moved


def damaged_command(results_dir: str | Path | None, move: bool = False) -> int:
    """``jsonbench.cli damaged``: list damaged files and publish leftovers; with ``move``, quarantine and sweep them.

    Exit status 0 when the dataset is clean (or was made clean), 1 when damaged files or leftovers remain.
    """
    from jsonbench import paths

    root = paths.results_dir(results_dir or None)
    damaged = find_damaged(root)
    leftovers = find_leftovers(root)
    for d in damaged:
        print(f"damaged: {d.path}: {d.error}")
    for p in leftovers:
        print(f"leftover of an interrupted publish: {p}")
    if not damaged and not leftovers:
        print(f"dataset under {root}: every file reads, no leftovers")
        return 0
    if not move:
        print(
            f"{len(damaged)} damaged file(s), {len(leftovers)} leftover(s); run again with --quarantine to move damaged files under "
            f"{root / QUARANTINE} (nothing is deleted) and sweep the leftovers"
        )
        return 1
    for p in sweep_leftovers(root):
        print(f"swept: {p}")
    for p in quarantine(root, damaged):
        print(f"quarantined: {p} (note: {p.name}.note.json)")
    left = find_damaged(root)
    return 1 if left or find_leftovers(root) else 0
