"""Setup step: one virtual environment per SQLite version of the matrix (``./bin/setup``).

Only PyPI is used, through pip, and only wheels (``--only-binary``): building apsw from source would
fetch SQLite from elsewhere. A version whose venv cannot be made is reported and skipped, not fatal:
the reason is written next to where the venv would be, and that version's cells fail at provision
time saying it, while every other cell runs.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

from jsonbench.engines.sqlite_venv import STAMP, check_versions, failure_note, python_of, stamp, venv_dir, venv_ready
from jsonbench.errors import BenchmarkError, EngineUnavailable
from jsonbench.matrix import Matrix, load_matrix
from jsonbench.setup.venv import venv_commands

PIP_TIMEOUT_S = 600


def ensure_venv(version: str, package: str, log: Callable[[str], None] | None = None) -> Path:
    """Create (once) the venv holding ``package`` and return its Python; raise ``EngineUnavailable`` on failure.

    Idempotent and cheap when the venv exists (one stamp file read). Creation takes a lock, so two
    tasks provisioning the same version at once build it once. Only PyPI is used, through pip, and
    only as a wheel (``--only-binary``): building apsw from source would fetch SQLite from elsewhere.
    """
    venv = venv_dir(version, package)
    if venv_ready(version, package):
        return python_of(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if venv_ready(version, package):
            return python_of(venv)
        shutil.rmtree(venv, ignore_errors=True)  # a half-made venv from an interrupted attempt
        if log:
            log(f"creating {venv} with {package}")
        for argv in venv_commands(venv, package):
            try:
                res = subprocess.run(argv, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                shutil.rmtree(venv, ignore_errors=True)
                raise EngineUnavailable(f"SQLite {version}: installing {package} into {venv} took over {PIP_TIMEOUT_S} s") from None
            if res.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                said = (res.stdout + res.stderr).strip()[-1500:]
                raise EngineUnavailable(
                    f"SQLite {version}: could not install {package} into {venv} ({' '.join(argv[2:4])} exited {res.returncode}):\n{said}"
                )
        res = subprocess.run(
            [str(python_of(venv)), "-I", "-c", "import apsw; print(apsw.sqlite_lib_version())"], capture_output=True, text=True, timeout=60
        )
        found = res.stdout.strip()
        if res.returncode != 0 or found != version:
            shutil.rmtree(venv, ignore_errors=True)
            raise EngineUnavailable(f"SQLite {version}: {package} installed but embeds SQLite {found or '?'} ({res.stderr.strip()[-500:]})")
        (venv / STAMP).write_text(json.dumps(stamp(package, version)))
    return python_of(venv)


def sqlite_engines(matrix: Matrix | None = None) -> list[tuple[str, str, str]]:
    """``(engine id, version, apsw package)`` of every SQLite engine in the matrix."""
    m = matrix or load_matrix()
    out = []
    for eid, eng in m.engines.items():
        if eng["family"] == "sqlite" and "apsw" in eng["backends"]:
            out.append((eid, str(eng["version"]), str((eng["backends"]["apsw"] or {}).get("package", ""))))
    return out


def _progress(eid: str, msg: str) -> None:
    print(f"{eid}: {msg}", flush=True)


def install_all(matrix: Matrix | None = None) -> list[str]:
    """Create the venv of every SQLite engine of the matrix (``./bin/setup``); return the ids that failed.

    A version that cannot be installed is reported and skipped, not fatal: its cell fails at
    provision time and every other cell still runs.
    """
    failed = []
    for eid, version, package in sqlite_engines(matrix):
        if venv_ready(version, package):
            print(f"{eid}: {package} ready in {venv_dir(version, package)}")
            continue
        try:
            check_versions(eid, version, package)
            python = ensure_venv(version, package, log=partial(_progress, eid))
            failure_note(version, package).unlink(missing_ok=True)
            print(f"{eid}: {package} installed ({python})")
        except BenchmarkError as exc:
            failed.append(eid)
            note = failure_note(version, package)
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(str(exc), encoding="utf-8")
            print(f"warning: {eid}: {exc}", file=sys.stderr)
    return failed
