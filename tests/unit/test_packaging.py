"""The maintainers' instruments (``dev/``) stay out of the product: not in the wheel, not in any Airflow container.

``pyproject.toml`` lets setuptools find packages under ``plugins/`` only, and no service of ``docker-compose.yaml``
mounts ``dev/`` (the containers get ``dags/``, ``plugins/`` and ``include/``). Both files are read as they are;
the test would fail on a ``where`` or a mount that reached ``dev``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _reaches_dev(path: str) -> bool:
    """Whether a ``where`` or a mount's host side is ``dev/``, inside it, or a folder holding it (the project's root)."""
    host = path.split(":", 1)[0].rstrip("/") or "/"
    return "dev" in Path(host).parts or host in (".", "..", "${PWD}", "$PWD")


def test_setuptools_finds_packages_under_plugins_only() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    find = project["tool"]["setuptools"]["packages"]["find"]
    assert find["where"] == ["plugins"]
    assert not any(_reaches_dev(w) for w in find["where"]) and not any("dev" in p for p in find.get("include", []))
    assert (ROOT / "dev" / "jsonbench_dev" / "__init__.py").is_file(), "the instruments are where this test says they are not shipped from"


def _mounts(service: dict[str, Any]) -> list[str]:
    out = []
    for v in service.get("volumes") or []:
        out.append(v if isinstance(v, str) else str(v.get("source", "")))
    return out


def test_no_container_mounts_dev() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yaml").read_text(encoding="utf-8"))  # anchors and merge keys resolved
    mounts = {name: _mounts(svc) for name, svc in compose["services"].items()}
    assert any("./plugins:/opt/airflow/plugins:ro" in m for m in mounts.values()), "the walk sees the services' bind mounts"
    bad = {name: [m for m in ms if _reaches_dev(m)] for name, ms in mounts.items()}
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_walk_would_see_a_mount_of_dev() -> None:
    assert _reaches_dev("./dev:/opt/airflow/dev:ro") and _reaches_dev("./dev/jsonbench_dev:/x") and _reaches_dev(".:/opt/airflow/src")
    assert not _reaches_dev("./plugins:/opt/airflow/plugins:ro") and not _reaches_dev("scratch:/opt/airflow/scratch")
