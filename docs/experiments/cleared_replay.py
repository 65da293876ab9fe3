"""Sitting 65's quota night judged again, with and without the night before's cleared value in its history (sitting 66).

The quota night at c4ed284 (``recorded/local-c4ed284-6b8986c8-quota/``) failed on 17's one-client fixed-count WAL
record size: the night before (``recorded/local-c4ed284-6b8986c8/``) measured it at 338.85 bytes, its confirmation
re-measured 327.93 and cleared it, and the quota night's window of the last two nights read the first value again. The
recorded folders keep measurements only, so the night before's confirmation row is not there: the replay leaves the
cleared value out, as ``jsonbench.history.cleared`` does when a re-measurement cannot be read.

``PYTHONPATH=plugins .venv/bin/python docs/experiments/cleared_replay.py``: the quota night's drift alarms, as judged
with the history as measured and as read now, each by a record of the other hosts (as ``drift-recheck`` judges).
"""

import pandas as pd

from jsonbench.checks.library import load_library
from jsonbench.history.cleared import as_history
from jsonbench.tools import plants
from jsonbench.tools.driftcheck import _run_ref
from jsonbench.tools.recheck import folders_to_check
from jsonbench.tools.record import build_record, read_runs

HOST = "6b8986c8"
NIGHT, QUOTA = "local-c4ed284-6b8986c8", "local-c4ed284-6b8986c8-quota"
SERIES = {"engine_id": "postgres-17", "metric": "wal_record_bytes"}

lib = load_library()
folders = folders_to_check([])
every = read_runs(folders, "local", "laptop")
mine = every[every["machine"].astype(str).str.startswith(HOST)].drop(columns=["host"])
quota = str(mine.loc[mine["folder"].str.endswith(QUOTA), "run_id"].iloc[0])
night = str(mine.loc[mine["folder"].str.endswith(NIGHT), "run_id"].iloc[0])
order = mine.groupby("run_id")["logical_date"].min().sort_values()
runs = [str(r) for r in order.index]
history = runs[: runs.index(quota) + 1]
data = mine[mine["run_id"].isin(history)]
others = sorted(set(every.loc[~every["machine"].astype(str).str.startswith(HOST), "run_id"].astype(str)))
record = build_record(folders[0][0], "laptop", "local", lib=lib, sources=folders, runs=others)
tonight = data[data["run_id"] == quota]
first = data[(data["run_id"] == night) & (data["engine_id"] == SERIES["engine_id"]) & (data["metric"] == SERIES["metric"])]
first = first[first["workload"].astype(str).str.contains("1client")]
print(f"host {HOST}: {len(history) - 1} earlier runs; the night before {night}, the quota night {quota}")
print(first[["suite", "workload", "variant", "metric", "value"]].to_string(index=False))
cleared = first.assign(check_kind="drift", verdict="cleared")[
    ["run_id", "check_kind", "verdict", "suite", "engine_id", "workload", "variant", "metric"]
]
read, how = as_history(data, cleared, pd.DataFrame(), tonight=quota)
print(f"read otherwise: replaced {len(how.replaced)}, left out {len(how.left_out)}")
for name, dataset in (("as measured", data), ("as read now", read)):
    frame = plants.drift_all(tonight, dataset, _run_ref(data, quota), lib, record)
    hits = frame[frame["verdict"] == "drift"]
    print(f"{name}: {len(plants.judged(frame))} judged, {len(hits)} alarm(s)")
    for r in hits.itertuples(index=False):
        print(f"  {r.suite}/{r.engine_id}/{r.workload}/{r.variant}/{r.metric}: {r.value:.4g} against {r.reference:.4g} ({r.method})")
