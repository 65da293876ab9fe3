"""Setup step: the venv of Apache Otava, the drift check's change-point detector (``./bin/setup``).

Otava pins a numpy the project's venv cannot hold, so it gets a venv of its own, pinned by
``history/otava-requirements.txt``; :mod:`jsonbench.history.changepoints` finds it (and says what is
missing when it is not there) and runs it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from jsonbench.history.changepoints import REQUIREMENTS, STAMP, DetectorUnavailable, python, ready, venv_dir
from jsonbench.setup.venv import venv_commands


def install(log: Any = print) -> Path:
    """Create the Otava venv from the pinned requirements (idempotent); return its Python."""
    if ready():
        log(f"otava: ready ({python()})")
        return python()
    venv = venv_dir()
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    log(f"otava: creating {venv} from {REQUIREMENTS.name}")
    for argv in venv_commands(venv, "-r", str(REQUIREMENTS)):
        res = subprocess.run(argv, capture_output=True, text=True, timeout=900)
        if res.returncode != 0:
            raise DetectorUnavailable(f"installing Otava failed ({' '.join(argv[:4])} ...): {(res.stderr or res.stdout)[-2000:]}")
    (venv / STAMP).write_text(REQUIREMENTS.read_text())
    log(f"otava: installed ({venv / 'bin' / 'python'})")
    return venv / "bin" / "python"
