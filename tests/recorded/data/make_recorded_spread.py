"""Write ``recorded_spread.json``: how far each metric moved between the recorded runs of this machine type.

Run from a worktree with ``source bin/env.sh`` (it reads ``../shared/recorded/``, which CI lacks, so the
test reads the summary this writes instead)::

    python tests/recorded/data/make_recorded_spread.py /work/shared/recorded

For each scale and ``suite/workload/metric``: the largest relative spread ((max - min) / |max|) of the
published value across the recorded runs, over every engine and variant (status ok only).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from jsonbench.dataset.read import read_dataset

FOLDERS = ("local-smoke", "local-laptop")


def main(root: Path) -> None:
    df = pd.concat([read_dataset(root / f).to_pandas() for f in FOLDERS])
    df = df[df["status"] == "ok"]
    g = df.groupby(["scale", "suite", "engine_id", "workload", "variant", "metric"])["value"].agg(["min", "max"]).reset_index()
    g["rel"] = (g["max"] - g["min"]) / g["max"].abs().where(g["max"] != 0, 1.0)
    worst = {scale: d.groupby(["suite", "workload", "metric"])["rel"].max().reset_index() for scale, d in g.groupby("scale")}
    out: dict[str, object] = {
        "source": "../shared/recorded/ (" + ", ".join(FOLDERS) + "), hardware label local (2 cores)",
        "runs": {scale: sorted(map(str, set(d["run_id"]))) for scale, d in df.groupby("scale")},
        "spread": {
            scale: {f"{r.suite}/{r.workload}/{r.metric}": round(float(r.rel), 6) for r in d.itertuples()} for scale, d in worst.items()
        },
    }
    target = Path(__file__).with_name("recorded_spread.json")
    target.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/recorded"))
