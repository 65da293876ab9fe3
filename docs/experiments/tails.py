"""The record's leave-one-out |z| per suite and kind: quantiles, and the far tail each POT threshold implies (sitting 65).

``PYTHONPATH=plugins .venv/bin/python docs/experiments/tails.py [laptop|smoke]`` over every recorded host; the
results are in docs/noise-levels.md (sitting 65).
"""

import math
import statistics
import sys

from jsonbench.checks.library import load_library
from jsonbench.dataset.measurement import HOST_SUITE
from jsonbench.history import hostspeed
from jsonbench_dev import record as R
from jsonbench_dev.recheck import folders_to_check

scale = sys.argv[1] if len(sys.argv) > 1 else "laptop"
lib = load_library()
df = R.read_runs(folders_to_check([]), "local", scale)
table = hostspeed.canary_table(df)
df = df[df["suite"] != HOST_SUITE]
ex = R.other_designs(df)
fits = R.canary_fits(R._series(df, ex, lib, table), lib.drift_policy)
df = df[df["host_cpu_quota"].isna()]
acc = R._series(df, ex, lib, table)
R._adjust(acc, lib, fits)
zs, _, _ = R._loo(acc, R._series_entries(acc))
p = 0.01 / 1476


def quantile(a: list[float], f: float) -> float:
    return a[int(f * (len(a) - 1))]


for key, z in sorted(zs.items()):
    a = sorted(abs(x) for x in z)
    n = len(a)
    row = [f"{key[0]}:{key[1]}", n, round(quantile(a, 0.95), 2), round(quantile(a, 0.99), 2), round(quantile(a, 0.999), 2), round(a[-1], 1)]
    for f in (0.95, 0.99):
        z0 = quantile(a, f)
        beta = statistics.fmean([x - z0 for x in a if x > z0])
        share = 1 - f
        zp = z0 + beta * math.log(share / p)
        row += [f"{f:.2f}: beta {beta:.2f} z(p) {zp:.1f} beyond {sum(x > zp for x in a)}"]
    print(*row, sep=" | ")
