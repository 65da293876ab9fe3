"""Where each SQLite version's venv lives and how to tell it is complete (no installing here).

apsw's version tracks SQLite's (``apsw==3.46.1.0`` embeds SQLite 3.46.1), and one Python environment
holds one apsw, so every SQLite version of the matrix gets its own venv under
``.cache/sqlite/<version>/<package>/``. ``./bin/setup`` creates them (:mod:`jsonbench.setup.sqlite_venvs`);
the adapter only finds them, and says why one is missing.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from jsonbench import paths
from jsonbench.errors import ConfigError

#: The first SQLite release with JSONB (the jsonb_* functions and the binary format).
MIN_VERSION = (3, 45, 0)
_PIN_RE = re.compile(r"^apsw==(\d+)\.(\d+)\.(\d+)\.(\d+)$")
_VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
STAMP = ".jsonbench-sqlite.json"
#: Written next to a venv that setup could not make, with pip's words (the cell that needs it says why).
FAILED = ".jsonbench-sqlite-failed.txt"


def venvs_root() -> Path:
    """Where the per-version venvs live (``$JSONBENCH_SQLITE_VENVS``, else ``.cache/sqlite``)."""
    return Path(os.environ.get("JSONBENCH_SQLITE_VENVS") or paths.PROJECT_ROOT / ".cache" / "sqlite")


def venv_dir(version: str, package: str) -> Path:
    """The venv of one SQLite version and apsw pin (a different pin never reuses another's venv)."""
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", package).strip("-")
    return venvs_root() / version / slug


def python_of(venv: Path) -> Path:
    return venv / "bin" / "python"


def stamp(package: str, version: str) -> dict[str, str]:
    """What a finished venv records; a venv whose stamp differs is rebuilt."""
    return {"package": package, "sqlite_version": version, "base_python": f"{sys.version_info[0]}.{sys.version_info[1]}"}


def venv_ready(version: str, package: str) -> bool:
    """True when the venv exists, finished installing, and was made for this pin (no process started)."""
    venv = venv_dir(version, package)
    try:
        return json.loads((venv / STAMP).read_text()) == stamp(package, version) and python_of(venv).exists()
    except (OSError, ValueError):
        return False


def install_failure(version: str, package: str) -> str | None:
    """What setup said when it could not make this venv, if it tried and failed."""
    note = venv_dir(version, package).parent / f"{venv_dir(version, package).name}{FAILED}"
    try:
        return note.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def failure_note(version: str, package: str) -> Path:
    venv = venv_dir(version, package)
    return venv.parent / f"{venv.name}{FAILED}"


def version_tuple(version: str) -> tuple[int, int, int] | None:
    m = _VERSION_RE.match(version)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def check_versions(engine_id: str, version: str, package: str) -> None:
    """Refuse (naming the ``engines`` field) a version without JSONB or a pin that is not that version."""
    v = version_tuple(version)
    if v is None:
        raise ConfigError("engines", f"engine {engine_id!r}: SQLite version {version!r} must look like 3.46.1")
    if v < MIN_VERSION:
        need = ".".join(map(str, MIN_VERSION))
        raise ConfigError(
            "engines", f"engine {engine_id!r}: SQLite {version} has no JSONB (first in {need}); choose SQLite {need} or newer"
        )
    pin = _PIN_RE.match(package)
    if pin is None:
        raise ConfigError(
            "engines", f"engine {engine_id!r}: backends.apsw.package must pin an exact apsw, e.g. 'apsw==3.46.1.0', got {package!r}"
        )
    if tuple(int(x) for x in pin.groups()[:3]) != v:
        raise ConfigError(
            "engines", f"engine {engine_id!r}: {package} does not embed SQLite {version} (apsw's first three numbers are SQLite's)"
        )
