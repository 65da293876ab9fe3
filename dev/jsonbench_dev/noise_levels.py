"""``jsonbench-dev noise-levels``: where a timed series' noise enters: its repetitions, its engine starts, its host.

Kalibera and Jones ("Rigorous benchmarking in reasonable time", ISMM 2013): variance enters at several
levels, and a comparison must replicate at the level where most of it enters. For every timed series
(suite, engine, workload, variant, metric) of the honest runs given (``recorded/`` by default, plus
``--results-dir``), in log space, so a figure reads as a relative spread:

* ``within``: the spread of one start's repetitions (the sd of the log of its ``samples``; a figure of several engine
  starts split by start), median over starts;
* ``expected``: about what that spread alone moves a figure of n repetitions (``1.2533 * within / sqrt(n)``, a
  median's standard error);
* ``starts``: the sd between runs of one host of the figure drift and the record judge (``noise.statistic``: the
  best repetition; with several engine starts, each start's best averaged), pooled over hosts;
* ``hosts``: the sd of the hosts' mean figure beyond what their starts alone put into it, over hosts whose data is
  the same (``hosts.json``'s not_asked); both as the calibration record splits them
  (:func:`jsonbench.history.noise.levels`), so the table and the thresholds a night uses agree.

If ``starts`` is about ``expected``, the repetitions decide a night and more of them help; if it is well above,
something that changes between engine starts does (memory layout, the page cache, checkpoint timing), and only
more starts help. Prints per suite the median of each level over its series, and which level dominates.
"""

from __future__ import annotations

import argparse
import collections
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonbench.cli import UsageError

MEDIAN_SE = 1.2533  # the standard error of a median of n normal samples is 1.2533 sigma / sqrt(n)
SCALES = ("smoke", "laptop", "full")


@dataclass
class SeriesNoise:
    """One timed series' spread at each level (log space; None where the runs do not tell)."""

    suite: str
    series: str
    within: float | None
    expected: float | None
    starts: float | None
    hosts: float | None
    n_starts: int
    n_hosts: int
    #: Each run's log figure by run id (what an arm of an experiment shifts, pair by pair).
    runs: dict[str, float] = field(default_factory=dict)
    #: Each run's host (``boot_id``) by run id.
    run_hosts: dict[str, str] = field(default_factory=dict)


def levels(folders: list[tuple[Path, dict[str, Any]]], label: str = "local", design: int | None = 1) -> list[SeriesNoise]:
    """Every timed series' noise per level over the honest runs of ``label`` in ``folders`` (``(results folder, manifest
    entry)``), read as the calibration record reads them (:func:`jsonbench_dev.record.read_runs`: quiet windows only,
    each run with its host) and split by the record's own definition of the levels (:func:`jsonbench.history.noise.levels`),
    so that this table and the thresholds a night uses say the same thing.

    ``design``: the engine starts of the figures read (1: one start's figures, as the record; None: whatever the folders hold, for an arm of
    its own, such as nights with ``--starts 2``: a row's samples then span its starts, so its ``within`` is an upper
    bound)."""
    import pandas as pd

    from jsonbench.dataset.measurement import HOST_SUITE
    from jsonbench.history.noise import start_groups, statistic
    from jsonbench.history.stats import levels as split
    from jsonbench_dev.record import read_runs

    out: list[SeriesNoise] = []
    for scale in SCALES:
        df = read_runs(folders, label, scale, design)
        if df.empty or "metric_kind" not in df:
            continue
        df = df[(df["metric_kind"] == "timed") & (df["status"] == "ok") & (df["suite"] != HOST_SUITE) & (df["value"] > 0)]
        if "host_cpu_quota" in df:  # a run under a CPU quota is a slower machine for an hour: left out, as the record does
            df = df[pd.to_numeric(df["host_cpu_quota"], errors="coerce").isna()]
        keys = ["suite", "engine_id", "workload", "variant", "metric"]
        for key, g in df.sort_values(["logical_date", "run_id"]).groupby(keys, sort=True):
            within_runs: list[float] = []
            expected_runs: list[float] = []
            figures: list[tuple[str, str, float]] = []
            for r in g.itertuples(index=False):
                extra = getattr(r, "extra", None)
                samples = list(r.samples) if r.samples is not None else []
                # Repetitions spread within one engine start: a figure of several starts is split by start first.
                for group in start_groups(samples, extra) or [samples]:
                    xs = [math.log(x) for x in group if x and x > 0]
                    if len(xs) >= 2:
                        sd = statistics.stdev(xs)
                        within_runs.append(sd)
                        expected_runs.append(MEDIAN_SE * sd / math.sqrt(len(xs)))
                # The figure drift judges (the best repetition; each start's best, averaged), not the row's median.
                fig = statistic(str(r.unit), r.value, r.samples, extra)
                if fig is not None and fig > 0:
                    figures.append((str(r.run_id), str(r.host), math.log(fig)))
            hosts = [h for _, h, _ in figures]
            starts, _, between_hosts, _ = split([v for _, _, v in figures], hosts)
            out.append(
                SeriesNoise(
                    suite=str(key[0]),
                    series="/".join([*(str(k) for k in key[1:]), scale]),
                    within=statistics.median(within_runs) if within_runs else None,
                    expected=statistics.median(expected_runs) if expected_runs else None,
                    starts=starts,
                    hosts=between_hosts,
                    n_starts=max(collections.Counter(hosts).values(), default=0),
                    n_hosts=len(set(hosts)),
                    runs={run: v for run, _, v in figures},
                    run_hosts={run: h for run, h, _ in figures},
                )
            )
    return out


def _med(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return statistics.median(vals) if vals else None


def render(series: list[SeriesNoise]) -> str:
    """Per suite and scale: the median spread of each level over its series, and the level that dominates."""

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{(math.exp(x) - 1) * 100:.1f} %"

    by_suite: dict[str, list[SeriesNoise]] = defaultdict(list)
    for s in series:
        by_suite[f"{s.suite} @ {s.series.rsplit('/', 1)[-1]}"].append(s)
    lines = [
        "| suite @ scale | series | repetitions (one start) | what they move a figure | between starts (one host) | between hosts | dominates |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, ss in sorted(by_suite.items()):
        w, e, st, h = (_med([getattr(s, k) for s in ss]) for k in ("within", "expected", "starts", "hosts"))
        levels_ = {"repetitions": e, "engine starts": st, "hosts": h}
        known = {k: v for k, v in levels_.items() if v is not None}
        top = max(known, key=lambda k: known[k]) if known else "-"
        if st is not None and e is not None and top == "engine starts" and st < 1.5 * e:
            top = "repetitions (starts within 1.5x of what they explain)"
        lines.append(f"| {name} | {len(ss)} | {pct(w)} | {pct(e)} | {pct(st)} | {pct(h)} | {top} |")
    return "\n".join(lines)


def compare_arms(arms: dict[str, list[SeriesNoise]]) -> str:
    """Arms of one experiment side by side (does fixing a candidate narrow the spread between starts?).

    Per suite and scale, over the series every arm measured: each arm's pooled between-starts sd (the sum of each
    series' squared spread times its degrees of freedom, over their sum: one host, so a start is a run) and its median
    repetition spread; then each arm's pooled variance against the first arm's, with a two-sided p of the F test in
    its normal approximation (the log of a variance ratio has sd sqrt(2/df1 + 2/df2)). The series are not
    independent (one start moves many at once), so read p as a guide, not a verdict. Each arm's runs must be of one host.

    Then what each arm shifts, pair by pair (:func:`_pairs`): the runs of an arm and of the first arm, interleaved in
    time, paired with their neighbour; per pair the median over the series both measured of the log move. An arm
    that moves every pair the same way shifts the level (a departure the history must tell apart); pairs that
    move either way are the hour's and the starts' noise. Comparing the arms' means instead mixes hours: a pair
    measured under a busier hypervisor shifts one arm's mean more where the other arm's run of it was disturbed.
    """
    names = list(arms)
    keyed = {a: {(s.suite, s.series): s for s in ss if s.starts is not None and s.n_starts >= 2} for a, ss in arms.items()}
    common = set.intersection(*(set(k) for k in keyed.values())) if keyed else set()
    by_suite: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for key in common:
        by_suite[f"{key[0]} @ {key[1].rsplit('/', 1)[-1]}"].append(key)

    def pooled(arm: str, keys: list[tuple[str, str]]) -> tuple[float, int]:
        ss = sum((keyed[arm][k].starts or 0.0) ** 2 * (keyed[arm][k].n_starts - 1) for k in keys)
        df = sum(keyed[arm][k].n_starts - 1 for k in keys)
        return ss / df, df

    def pct(x: float) -> str:
        return f"{(math.exp(x) - 1) * 100:.1f} %"

    head = " | ".join(f"{a}: between starts (df) | {a}: repetitions" for a in names)
    lines = [f"| suite @ scale | series | {head} | " + " | ".join(f"{a} / {names[0]} variance (p)" for a in names[1:]) + " |"]
    lines.append("|---|---|" + "---|---|" * len(names) + "---|" * (len(names) - 1))
    for name, keys in sorted(by_suite.items()):
        cells, base = [], pooled(names[0], keys)
        for a in names:
            var, df = pooled(a, keys)
            reps = _med([keyed[a][k].within for k in keys])
            cells += [f"{pct(math.sqrt(var))} ({df})", "-" if reps is None else pct(reps)]
        for a in names[1:]:
            var, df = pooled(a, keys)
            ratio = var / base[0] if base[0] else float("nan")
            z = math.log(ratio) / math.sqrt(2 / df + 2 / base[1]) if ratio > 0 and df and base[1] else float("nan")
            p = math.erfc(abs(z) / math.sqrt(2))
            cells.append(f"{ratio:.2f} (p {p:.2f})")
        lines.append(f"| {name} | {len(keys)} | " + " | ".join(cells) + " |")
    lines += ["", "| suite @ scale | pair (first arm's run, then the other's) | series | the other / the first (median) | higher |"]
    lines.append("|---|---|---|---|---|")
    for name, keys in sorted(by_suite.items()):
        for a in names[1:]:
            for base_run, run in _pairs(
                [set().union(*(keyed[names[0]][k].runs for k in keys)), set().union(*(keyed[a][k].runs for k in keys))]
            ):
                moves = [
                    keyed[a][k].runs[run] - keyed[names[0]][k].runs[base_run]
                    for k in keys
                    if run in keyed[a][k].runs and base_run in keyed[names[0]][k].runs
                ]
                if moves:
                    higher = sum(m > 0 for m in moves) / len(moves)
                    lines.append(
                        f"| {name} | {names[0]} {_short(base_run)}, {a} {_short(run)} | {len(moves)} | "
                        f"{math.exp(statistics.median(moves)):.3f}x | {higher:.0%} |"
                    )
    return "\n".join(lines)


def _short(run_id: str) -> str:
    return run_id.removeprefix("manual__")[:19]


def _pairs(arms: list[set[str]]) -> list[tuple[str, str]]:
    """(run of the first arm, run of the second) pairs of runs next to each other in time (run ids sort by their date).

    Walks both arms' runs in time order and pairs each run with the next one when that one is of the other arm;
    a run with no neighbour of the other arm stays unpaired. Interleaved runs (off, on, off, on) give one pair each.
    """
    ordered = sorted([(r, 0) for r in arms[0]] + [(r, 1) for r in arms[1]])
    out: list[tuple[str, str]] = []
    i = 0
    while i + 1 < len(ordered):
        (r1, a1), (r2, a2) = ordered[i], ordered[i + 1]
        if a1 != a2:
            out.append((r1, r2) if a1 == 0 else (r2, r1))
            i += 2
        else:
            i += 1
    return out


def render_fit(record: dict[str, Any]) -> str:
    """The record's canary fit as a table: per suite, workload and policy component, each component's slope (+- se, r²,
    the canary's spread between the runs) and what drift takes out."""
    from jsonbench.history.hostspeed import SPEED_COMPONENTS

    def one(f: dict[str, Any] | None) -> str:
        if not f:
            return "-"
        r2 = "-" if f.get("r2") is None else f"{f['r2']:.2f}"
        return f"{f['slope']:.2f} +- {f['se']:.2f} (r² {r2}, canary sd {f['canary_sd']:.1%}{'' if f.get('decisive') else ', not decisive'})"

    comps = SPEED_COMPONENTS
    lines = [
        f"canary fit of the {record.get('hardware_label')} record at {record.get('scale')} ({record.get('created_at')})",
        "",
        "| suite | workload | drift.json's component | " + " | ".join(f"{c} slope" for c in comps) + " | taken out |",
        "|---|---|---|" + "---|" * len(comps) + "---|",
    ]
    for f in (record.get("canary_fit") or {}).values():
        fits = f.get("fits") or {}
        took = "nothing (judged as measured)" if f.get("use") is None else f"{f['use']} x {float(f.get('coef') or 1):.2f}"
        lines.append(f"| {f['suite']} | {f['workload']} | {f['policy']} | " + " | ".join(one(fits.get(c)) for c in comps) + f" | {took} |")
    return "\n".join(lines)


def shared_by_versions(series: list[SeriesNoise]) -> dict[str, tuple[int, float, float]]:
    """How much of a series' move between two nights its versions share: per suite, (moves, sd of the moves, sd of the
    contrasts), over every series measured on three engines or more of its suite.

    For each pair of consecutive runs that measured the series on all its engines, a version's move less the mean move
    of the same series on the other versions that night. If the versions share nothing, the contrast's variance is the
    move's times 1 + 1 / (engines - 1) (1.5 with three); below the move's only where most of it is shared. A family's
    median moves with the host and about half of it cancels against the versions beside it (the family test's
    ``contrast_sigma``); this asks the same of a single series (mostly it does not).
    """
    by_key: dict[tuple[str, str], dict[str, dict[str, float]]] = defaultdict(dict)
    for s in series:
        engine, _, rest = s.series.partition("/")
        by_key[(s.suite, rest)][engine] = s.runs
    moves: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for (suite, _), engines in by_key.items():
        if len(engines) < 3:
            continue
        common = sorted(set.intersection(*(set(r) for r in engines.values())))
        for a, b in zip(common, common[1:], strict=False):
            m = {e: r[b] - r[a] for e, r in engines.items()}
            for e, x in m.items():
                moves[suite][0].append(x)
                moves[suite][1].append(x - statistics.mean(y for f, y in m.items() if f != e))
    return {suite: (len(ms), statistics.pstdev(ms), statistics.pstdev(cs)) for suite, (ms, cs) in sorted(moves.items()) if len(ms) >= 2}


def render_shared(shared: dict[str, tuple[int, float, float]]) -> str:
    lines = ["| suite | moves | sd of a move | sd against its versions | variance ratio (1.5 with three engines if nothing is shared) |"]
    lines.append("|---|---|---|---|---|")
    for suite, (n, sm, sc) in shared.items():
        lines.append(f"| {suite} | {n} | {sm:.3f} | {sc:.3f} | {sc**2 / sm**2:.2f} |")
    return "\n".join(lines)


@dataclass(frozen=True)
class QuotientNoise:
    """One timing finding's quotient on one engine and scale against its inputs, between starts of one host (log sd)."""

    suite: str
    finding: str
    engine_id: str
    scale: str
    runs: int
    quotient: float
    inputs: list[float]

    @property
    def shared(self) -> float:
        """How much of the inputs' variance the quotient keeps: 1 when nothing is shared between them (what moves one
        input between starts does not move the other), near 0 when a start or a host moves them together and cancels."""
        total = sum(x * x for x in self.inputs)
        return self.quotient**2 / total if total else float("nan")


def quotients(series: list[SeriesNoise], reproduction: dict[str, Any]) -> list[QuotientNoise]:
    """Every per-engine timing finding of two inputs or more (a numerator and a denominator: "jsonb reads faster than
    json"), its quotient's spread between starts of one host beside its inputs' (ratios of two designs
    measured in one cell are judged as their own series where the host cancels in them).

    A finding that reads one published ratio (the catalogue's ``tps_ratio``, SQLite's per-position ratios) is that
    ratio's series already, and is not listed."""
    from jsonbench.checks.findings import term_key
    from jsonbench.history.stats import levels as split

    by = {s.series: s for s in series}
    scales = sorted({s.series.rsplit("/", 1)[-1] for s in series})
    out: list[QuotientNoise] = []
    for suite, definition in sorted(reproduction.items()):
        engines = sorted({s.series.split("/", 1)[0] for s in series if s.suite == suite})
        for f in definition.get("findings", []):
            num, den = f.get("numerator") or [], f.get("denominator") or []
            if f.get("kind", "timing") != "timing" or not num or not den or any(t.get("engine") for t in num + den):
                continue
            for engine in engines:
                for scale in scales:
                    ins = {term_key(t): by.get("/".join([engine, *term_key(t), scale])) for t in num + den}
                    have = {k: x for k, x in ins.items() if x is not None}
                    if len(have) < len(ins):
                        continue
                    common = sorted(set.intersection(*(set(x.runs) for x in have.values())))
                    hosts = [next(iter(have.values())).run_hosts[r] for r in common]

                    # The finding's own arithmetic (findings.finding_value: quotient, geometric mean) on each run's figures.
                    figs = [_quotient_of(f, have, r) for r in common]
                    sd = split([math.log(v) for v in figs if v], hosts)[0] if all(figs) else None
                    spreads = [split([x.runs[r] for r in common], hosts)[0] for x in have.values()]
                    if sd is None or any(v is None for v in spreads):
                        continue
                    out.append(QuotientNoise(suite, str(f["id"]), engine, scale, len(common), sd, [float(v or 0.0) for v in spreads]))
    return out


def _quotient_of(finding: dict[str, Any], inputs: dict[tuple[str, str, str], SeriesNoise], run: str) -> float | None:
    """One run's figure of ``finding`` from its inputs' figures in that run, by the finding's own arithmetic."""
    from jsonbench.checks.findings import Values, finding_value

    vals: Values = {k: (math.exp(x.runs[run]), "ok") for k, x in inputs.items()}
    return finding_value(vals, finding)[0]


def render_quotients(rows: list[QuotientNoise]) -> str:
    """Per suite and scale: the median between-starts spread of the findings' quotients and of their inputs, and the
    median share of the inputs' variance the quotient keeps (1: nothing cancels; well below 1: judge the quotient)."""

    def pct(x: float) -> str:
        return f"{(math.exp(x) - 1) * 100:.1f} %"

    by: dict[tuple[str, str], list[QuotientNoise]] = defaultdict(list)
    for r in rows:
        by[(r.suite, r.scale)].append(r)
    lines = [
        "| suite @ scale | findings x engines | quotient, between starts | its inputs, between starts | variance kept (1: nothing cancels) |",
        "|---|---|---|---|---|",
    ]
    for (suite, scale), rs in sorted(by.items()):
        q = statistics.median(r.quotient for r in rs)
        i = statistics.median(statistics.median(r.inputs) for r in rs)
        kept = statistics.median(r.shared for r in rs)
        lines.append(f"| {suite} @ {scale} | {len(rs)} | {pct(q)} | {pct(i)} | {kept:.2f} |")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """The command: the levels of every series, or one of the ``instead`` views its options name."""
    if args.versions:
        print(render_shared(shared_by_versions(levels([(Path(d), {}) for d in args.versions.split(",")]))))
        return 0
    if args.canary_fit:
        from jsonbench.history.noise import load_record

        rec = load_record("local", args.canary_fit)
        if rec is None:
            raise UsageError(f"no committed record of label local at scale {args.canary_fit!r}")
        print(render_fit(rec))
        return 0
    if args.arm:
        arms: dict[str, list[SeriesNoise]] = {}
        for spec in args.arm:
            name, sep, dirs = spec.partition("=")
            if not sep or not dirs:
                raise UsageError(f"--arm: expected NAME=DIR[,DIR...], got {spec!r}")
            arms[name] = levels([(Path(d), {}) for d in dirs.split(",")], design=None)
        print(compare_arms(arms))
        return 0
    from jsonbench_dev.recheck import folders_to_check

    folders = folders_to_check(args.results_dir, Path(args.recorded) if args.recorded else None)
    if args.no_recorded:
        folders = [(Path(d), {}) for d in args.results_dir]
    if args.quotients:
        from jsonbench.checks.library import load_library

        print(render_quotients(quotients(levels(folders), load_library().reproduction)))
        return 0
    print(render(levels(folders)))
    return 0
