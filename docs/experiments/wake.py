"""Does the canary's wakeup component move as pgbench's statements do, where the SHA components do not? (sitting 65)

Run alone, as root, from the repository after ./bin/setup: ``.venv/bin/python docs/experiments/wake.py`` (``ROUNDS=2``
by default). The results are in docs/noise-levels.md (sitting 65).


A PostgreSQL 17 server (the project's embedded build) on a socket, pgbench -i -s 5; then, alternating, three host
conditions: free; every process on one core (taskset: wake-ups become context switches on one CPU); a busy-loop
neighbour on core 1. In each: the canary (every component, 5 samples), pgbench -S at 1 and 2 clients (5 s each), and
one server-internal CPU statement (generate_series count, one client). Prints each figure and its ratio to free.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PG = REPO / "engines/postgres/node_modules/pg17/native/bin"
PY = sys.executable
PLUGINS = str(REPO / "plugins")
sys.path.insert(0, PLUGINS)
from jsonbench.engines.postgres_embedded import find_pgbench  # noqa: E402

PGBENCH = str(find_pgbench())
ROOT = Path("/tmp/wake")
SOCK = str(ROOT)
PORT = "5499"
AS = ["/usr/sbin/runuser", "-u", "postgres", "--"]
ROUNDS = int(os.environ.get("ROUNDS", "2"))


def sh(*argv, env=None, check=True):
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=check)


def pgbench(args, pin):
    pre = ["taskset", "-c", "0"] if pin else []
    out = sh(*pre, PGBENCH, "-h", SOCK, "-p", PORT, "-n", *args, "postgres").stdout
    lat = [float(line.split("=")[1].split()[0]) for line in out.splitlines() if line.startswith("latency average")]
    return lat[0]


def canary(pin):
    pre = ["taskset", "-c", "0"] if pin else []
    env = {**os.environ, "PYTHONPATH": PLUGINS}
    got = json.loads(sh(*pre, PY, "-m", "jsonbench.host.canary", str(ROOT / "fs"), env=env).stdout.strip().splitlines()[-1])
    return {k: min(v) for k, v in got["samples"].items()}


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    (ROOT / "fs").mkdir(parents=True)
    shutil.chown(ROOT, "postgres", "postgres")
    env = {**os.environ, "LD_LIBRARY_PATH": str(PG.parent / "lib")}
    sh(*AS, str(PG / "initdb"), "-D", str(ROOT / "data"), "-U", "postgres", "--auth=trust", env=env)
    opts = f"-c listen_addresses='' -c unix_socket_directories={SOCK} -p {PORT} -c shared_buffers=128MB -c autovacuum=off"
    sh(*AS, str(PG / "pg_ctl"), "-D", str(ROOT / "data"), "-o", opts, "-w", "-l", str(ROOT / "log"), "start", env=env)
    postmaster = int((ROOT / "data" / "postmaster.pid").read_text().split()[0])
    try:
        sh(PGBENCH, "-h", SOCK, "-p", PORT, "-U", "postgres", "-i", "-s", "5", "-q", "postgres")
        (ROOT / "cpu.sql").write_text("SELECT count(*) FROM generate_series(1, 2000000);\n")
        res = {}
        for rnd in range(ROUNDS):
            for cond in ("free", "onecore", "neighbour"):
                pin = cond == "onecore"
                sh("taskset", "-a", "-cp", "0" if pin else "0,1", str(postmaster))
                hog = subprocess.Popen(["taskset", "-c", "1", PY, "-c", "while True: pass"]) if cond == "neighbour" else None
                try:
                    time.sleep(0.5)
                    got = canary(pin)
                    got["pgbench_S_c1_ms"] = pgbench(["-U", "postgres", "-S", "-c", "1", "-T", "5"], pin)
                    got["pgbench_S_c2_ms"] = pgbench(["-U", "postgres", "-S", "-c", "2", "-j", "2", "-T", "5"], pin)
                    got["server_cpu_ms"] = pgbench(["-U", "postgres", "-f", str(ROOT / "cpu.sql"), "-c", "1", "-t", "8"], pin)
                finally:
                    if hog:
                        hog.kill()
                        hog.wait()
                res.setdefault(cond, []).append(got)
                print(rnd, cond, json.dumps({k: round(v, 4) for k, v in got.items()}), flush=True)
        keys = list(res["free"][0])
        base = {k: statistics.median(r[k] for r in res["free"]) for k in keys}
        print("\nmedian over rounds, and ratio to free")
        print("condition  " + "  ".join(f"{k:>16}" for k in keys))
        for cond, rows in res.items():
            med = {k: statistics.median(r[k] for r in rows) for k in keys}
            print(f"{cond:10} " + "  ".join(f"{med[k]:9.3f} {med[k] / base[k]:5.2f}x" for k in keys))
    finally:
        sh("taskset", "-a", "-cp", "0,1", str(postmaster), check=False)
        sh(*AS, str(PG / "pg_ctl"), "-D", str(ROOT / "data"), "-m", "fast", "-w", "stop", env=env, check=False)


if __name__ == "__main__":
    main()
