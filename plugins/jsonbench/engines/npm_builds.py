"""Where an npm PostgreSQL build lives, and which setup command fetches it.

The matrix names an embedded build by its npm alias (``build: pg17``). Each alias is declared, with its
package and version, in the ``package.json`` of one npm project under ``engines/`` and pinned with an
integrity hash in that project's ``package-lock.json``; ``npm ci`` (run by ``./bin/setup``) unpacks it into
the project's ``node_modules/<alias>``. The projects differ only in when setup fetches them: the builds every
default run needs come with the quick start's setup, the others (older minor releases, for comparing a minor
upgrade on one host) only when asked, so the quick start does not download them.

The declarations are read from the project's own ``engines/``; the unpacked builds from ``paths.ENGINES_DIR``
(the same folder unless ``$JSONBENCH_ENGINES_DIR`` points elsewhere).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from jsonbench import paths
from jsonbench.errors import EngineUnavailable

#: The npm projects under ``engines/`` holding PostgreSQL builds, each with the setup command that fetches it.
PROJECTS: dict[str, str] = {
    "postgres": "./bin/setup",
    "postgres-extra": "./bin/setup --builds",
}


@dataclass(frozen=True)
class NpmBuild:
    """One pinned build: its alias, the npm project that declares it and the command that fetches that project."""

    alias: str
    project: str
    fetch_command: str

    @property
    def lock_file(self) -> Path:
        return _declared_in(self.project) / "package-lock.json"

    @property
    def package_dir(self) -> Path:
        return paths.ENGINES_DIR / self.project / "node_modules" / self.alias

    @property
    def native_dir(self) -> Path:
        """The unpacked build (``bin/``, ``lib/``, ``share/``)."""
        return self.package_dir / "native"

    @property
    def bin_dir(self) -> Path:
        return self.native_dir / "bin"

    def pinned(self) -> dict[str, str]:
        """The lock file's entry of this build: ``name``, ``version`` and ``integrity`` (empty when not locked)."""
        packages = _read_json(self.lock_file).get("packages")
        entry = packages.get(f"node_modules/{self.alias}") if isinstance(packages, dict) else None
        if not isinstance(entry, dict):
            return {}
        return {k: str(entry[k]) for k in ("name", "version", "integrity") if k in entry}

    def fetched(self) -> bool:
        """Whether ``npm ci`` has unpacked it (its three server tools are there)."""
        return all((self.bin_dir / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres"))


def _read_json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _declared_in(project: str) -> Path:
    return paths.PROJECT_ROOT / "engines" / project


def fetched_dirs() -> list[Path]:
    """Each project's ``node_modules`` that setup has fetched, in :data:`PROJECTS` order."""
    return [d for d in (paths.ENGINES_DIR / name / "node_modules" for name in PROJECTS) if d.is_dir()]


def npm_build(alias: str) -> NpmBuild:
    """The build ``alias`` names: the project whose ``package.json`` declares it, or :class:`EngineUnavailable`."""
    for name, command in PROJECTS.items():
        declared = _read_json(_declared_in(name) / "package.json").get("dependencies") or {}
        if isinstance(declared, dict) and alias in declared:
            return NpmBuild(alias, name, command)
    where = ", ".join(f"engines/{name}/package.json" for name in PROJECTS)
    raise EngineUnavailable(f"build {alias!r} is declared in none of {where}")
