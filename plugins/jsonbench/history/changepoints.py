"""Apache Otava in its own environment: finding it, and asking it for the change points of many series.

Otava (the E-divisive means method with Student's t-test significance, as DataStax's Hunter and
MongoDB published it) is made for exactly this: performance history with few, noisy points per
series. ``apache-otava==0.8.0`` pins ``numpy==2.2.0.*`` on Python < 3.14, so it cannot share the
Airflow venv (numpy 2.4); it gets a venv of its own, pinned by ``otava-requirements.txt`` beside
this file, made by ``python -m jsonbench.cli install-otava`` (``./bin/setup`` runs it;
:mod:`jsonbench.setup.otava_venv`). The check
calls it once per check run through :mod:`jsonbench.history.otava_runner` (a subprocess, JSON in and
out): a few hundred series take about a second.

``$JSONBENCH_OTAVA_PYTHON`` names another interpreter that has ``apache-otava`` installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from jsonbench import paths

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "otava-requirements.txt"
RUNNER = HERE / "otava_runner.py"
TIMEOUT_S = 300
STAMP = ".jsonbench-otava"  # written last by the install: the venv is complete


class DetectorUnavailable(RuntimeError):
    """Otava's environment is missing or broken; drift cannot be judged statistically."""


@dataclass(frozen=True)
class ChangePoint:
    """One change point Otava found in a series: the new segment starts at ``index``."""

    index: int
    pvalue: float
    mean_before: float
    mean_after: float
    stddev_before: float
    stddev_after: float
    forward_change: float
    magnitude: float


def _requirements_hash() -> str:
    """The pins alone: a comment edited in the requirements file does not ask for a new venv."""
    pins = [ln.strip() for ln in REQUIREMENTS.read_text().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return hashlib.sha256("\n".join(pins).encode()).hexdigest()[:12]


def venv_dir() -> Path:
    """Where the Otava venv lives (one per pinned requirements file)."""
    root = Path(os.environ.get("JSONBENCH_OTAVA_VENV_ROOT") or paths.PROJECT_ROOT / ".cache" / "otava")
    return root / _requirements_hash()


def python() -> Path:
    """The interpreter that runs Otava."""
    override = os.environ.get("JSONBENCH_OTAVA_PYTHON")
    return Path(override) if override else venv_dir() / "bin" / "python"


def ready() -> bool:
    """True when the Otava venv finished installing (a stamp file is written last)."""
    if os.environ.get("JSONBENCH_OTAVA_PYTHON"):
        return Path(os.environ["JSONBENCH_OTAVA_PYTHON"]).exists()
    return (venv_dir() / STAMP).exists() and python().exists()


def detect(
    series: dict[str, tuple[list[float], float]], *, window_len: int = 30, max_pvalue: float = 0.001
) -> tuple[str, dict[str, list[ChangePoint]]]:
    """Change points of every series (id -> (values, min_magnitude)); returns (Otava's version, results)."""
    if not series:
        return "", {}
    if not ready():
        raise DetectorUnavailable(
            f"Apache Otava is not installed at {python()}; run ./bin/setup (or python -m jsonbench.cli install-otava)"
        )
    request = {
        "window_len": window_len,
        "max_pvalue": max_pvalue,
        "series": {k: {"values": v, "min_magnitude": m} for k, (v, m) in series.items()},
    }
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    res = subprocess.run(
        [str(python()), str(RUNNER)], input=json.dumps(request), capture_output=True, text=True, timeout=TIMEOUT_S, env=env
    )
    if res.returncode != 0:
        raise DetectorUnavailable(f"Otava failed (exit {res.returncode}): {res.stderr[-2000:]}")
    out = json.loads(res.stdout)
    return str(out.get("otava", "")), {k: [ChangePoint(**cp) for cp in v] for k, v in out["results"].items()}
