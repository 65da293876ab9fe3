"""The calibration record, built from recorded honest runs: a maintainers' tool, not part of a night.

``jsonbench-dev calibrate --record`` (and ``jsonbench-dev campaign``) call :func:`build_record`; a night reads the
record it wrote through :func:`jsonbench.history.noise.load_record`, and judges with the statistics of
:mod:`jsonbench.history.noise`. The record names its runs, so that every threshold can be derived again
from data that exists. It holds, per series, the spread at each level where noise enters (repetitions
inside a start, engine starts on one host, hosts: :func:`jsonbench.history.noise.levels`), shrunk towards
the suite's prior; per family (an engine's suite) the same for a whole-family move; the run-wide level
(``common``); the heavy tail of a lone series' null, fitted on leave-one-out residuals; and per timing
finding of the reproduction checks, the run-to-run spread of its ratio (which is why it reads the
findings of :mod:`jsonbench.checks`, and lives above both rooms).
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.dataset.measurement import HOST_SUITE, finite_float, is_polled_peak
from jsonbench.dataset.read import row_tuples
from jsonbench.history import hostspeed
from jsonbench.history.noise import (
    CONTRAST,
    DEFAULT_TAIL,
    FAMILY_FLOOR,
    FORMAT,
    PRIOR_DF,
    SAMPLED_FLOOR,
    SIGMA_FLOOR,
    canary_component,
    host_of,
    kind_of,
    load_record,
    record_path,
    series_key,
    statistic,
    tail_of,
)
from jsonbench.history.stats import (
    FAMILY_LEVEL,
    FDR_Q,
    MIN_EFFECT,
    POWER,
    REF_RUNS,
    family_mds,
    host_move,
    host_seen,
    levels,
    log_of,
    thresholds,
)

#: Below this spread of the canary between a machine's runs (log, about 2 %: the timer floor of a series) a fit cannot
#: tell a workload that follows the canary from one that does not, whatever its standard error says.
CANARY_FIT_MIN_SD = 0.02
#: ... nor a slope known less well than this.
CANARY_FIT_MAX_SE = 0.25
#: The share of the canary's move taken out of a timing is the fitted slope, within [0, CANARY_MAX_COEF]; below
#: CANARY_MIN_COEF the canary explains nothing of the workload and none is taken out.
CANARY_MAX_COEF = 1.5
CANARY_MIN_COEF = 0.1


def _sd(xs: list[float]) -> float | None:
    return statistics.stdev(xs) if len(xs) >= 2 else None


@dataclass
class _Acc:
    """What the chosen runs say about one series while the record is built."""

    suite: str
    engine_id: str
    engine_build: str
    workload: str
    variant: str
    metric: str
    unit: str
    kind: str
    logs: list[float]
    runs: list[str]
    # the host (``boot_id``) and engine build of each run (:func:`_unit`): between starts is measured inside one, between
    # hosts across them (a night's history is of its own build, so another build's level is another host's)
    hosts: list[str]
    within_ss: float = 0.0
    within_df: int = 0
    canary: str | None = None  # the canary component taken out of ``logs`` (every run had it), else None
    # the machine (``boot_id``) and commit of each run, a CPU quota or not (``hosts`` tells a quota run apart), and every
    # canary component beside its cell: what the canary's fit reads (:func:`canary_fits`)
    machines: list[str] = field(default_factory=list)
    canary_all: list[dict[str, float]] = field(default_factory=list)
    builds: list[str] = field(default_factory=list)  # the engine build of each run


def _unit(host: str, build: str) -> str:
    """Where a series' starts are compared: one host and one engine build."""
    return f"{host}\x1f{build}"


def _host_of_unit(unit: str) -> str:
    return unit.split("\x1f")[0]


def _builds(a: _Acc) -> list[str]:
    """The builds a series was measured on, the most runs' first."""
    return sorted(set(a.builds), key=lambda b: (-a.builds.count(b), b))


def _excluded(run_id: str, suite: str, exclude: dict[str, set[str] | None]) -> bool:
    if run_id not in exclude:
        return False
    suites = exclude[run_id]
    return suites is None or suite in suites


def parse_exclude(items: Iterable[str]) -> dict[str, set[str] | None]:
    """``RUN_ID`` (the whole run) or ``RUN_ID::SUITE[,SUITE]`` (some of its suites) -> {run: suites or None}."""
    out: dict[str, set[str] | None] = {}
    for item in items:
        # run ids contain ':' themselves (manual__2026-12-01T06:14:12+00:00), so the suites follow '::'.
        run, _, suites = item.partition("::")
        out[run] = {s for s in suites.split(",") if s} or None
    return out


def other_designs(df: pd.DataFrame) -> dict[str, set[str]]:
    """The (run, suites) measured under another design than the one the record is of: per suite and engine, the design
    most runs were measured under (the default: every recorded default night shares one, ``test_drift_design``).

    A design is what drift keeps a history apart by (``history.drift.design_of``: the server's settings and its
    processes' ASLR; ``cell.design_params_of``: the read order; the engine starts are ``read_runs``'s). The campaign's
    arms are other designs (huge pages ran json_vs_jsonb 20-26 % slower, ASLR on doubled the spread between starts on
    one host, interleaved reads move every read series), so a record of the default that read them would hold their
    moves as noise. A run that recorded no ASLR (from before it was a fact of the row) is of unknown ASLR, not of
    another design: the first hosts' runs are only that way.
    """
    from jsonbench.cell import design_params_of
    from jsonbench.history.drift import design_of

    cols = [c for c in ("settings", "engine_facts", "scale_params") if c in df]
    if df.empty or not cols:
        return {}
    keys: dict[tuple[str, str, str], tuple[str, str | None]] = {}  # (run, suite, engine) -> (settings and order, aslr)
    for (run, suite, engine), g in df.groupby(["run_id", "suite", "engine_id"], sort=False):
        r = g.iloc[0]
        design = json.loads(design_of(r.get("settings"), r.get("engine_facts")))
        order = design_params_of(r.get("scale_params"))[1:]
        aslr = design.get("aslr")
        keys[(str(run), str(suite), str(engine))] = (
            json.dumps([design.get("settings"), order], sort_keys=True),
            None if aslr is None else str(aslr),
        )
    out: dict[str, set[str]] = {}
    for suite, engine in {(sx, e) for _, sx, e in keys}:
        mine = {run: k for (run, sx, e), k in keys.items() if (sx, e) == (suite, engine)}
        settings = statistics.mode(sorted(k[0] for k in mine.values()))
        known = sorted(k[1] for k in mine.values() if k[1] is not None)
        aslr = statistics.mode(known) if known else None
        for run, (st, a) in mine.items():
            if st != settings or (a is not None and aslr is not None and a != aslr):
                out.setdefault(run, set()).add(suite)
    return out


#: What :func:`_series` reads of a row (``host_of`` the last three).
_SERIES_COLUMNS = (
    "status", "run_id", "suite", "engine_id", "engine_build", "workload", "variant", "metric", "unit", "metric_kind",
    "value", "samples", "extra", "git_revision", "machine", "host", "host_boot_id", "host_cpu_quota",
)  # fmt: skip


def _series(df: pd.DataFrame, exclude: dict[str, set[str] | None], lib: Any, canary: Any = None) -> dict[tuple[str, ...], _Acc]:
    """Every statistical series of ``df``'s runs, each run with its host, its machine and the canary beside its cell
    (``canary``: :func:`jsonbench.history.hostspeed.canary_table`), as measured: :func:`_adjust` takes the canary out."""
    from jsonbench.history.rules import rule_for

    acc: dict[tuple[str, ...], _Acc] = {}
    rules: dict[tuple[str, ...], bool] = {}
    # Only the columns read below, as plain columns (row_tuples: a record of a few hundred runs spent most of its time
    # iterating Arrow-backed strings it never read).
    for r in row_tuples(df.sort_values(["logical_date", "run_id"]), _SERIES_COLUMNS):
        if r.status != "ok" or _excluded(str(r.run_id), str(r.suite), exclude):
            continue
        rk = (r.suite, r.workload, r.variant, r.metric, r.unit)
        if rk not in rules:
            rules[rk] = rule_for(lib.drift_policy(r.suite), *rk).kind == "deterministic"
        kind = kind_of(r.suite, r.workload, r.metric, r.unit, getattr(r, "metric_kind", None), rules[rk])
        if kind == "deterministic":
            continue
        lv = log_of(statistic(r.unit, r.value, r.samples, getattr(r, "extra", None)))
        if lv is None:
            continue
        build = "" if r.engine_build is None or (isinstance(r.engine_build, float)) else str(r.engine_build)
        # One series per engine id over its builds (``engine_builds``): a series' noise is its workload's on this hardware
        # type, and the same SQLite built for another Python (3.11.2 on some hosts, 3.11.7 on others) is judged by it too
        # (drift serves a build up to its interpreter's patch release: noise.serves).
        key = (r.suite, r.engine_id, r.workload, r.variant, r.metric)
        a = acc.get(key)
        if a is None:
            a = acc[key] = _Acc(r.suite, r.engine_id, build, r.workload, r.variant, r.metric, r.unit, kind, [], [], [])
        if a.runs and a.runs[-1] == str(r.run_id):
            continue
        a.logs.append(lv)
        a.runs.append(str(r.run_id))
        a.hosts.append(_unit(host_of(r), build))
        a.builds.append(build)
        # the fit's unit: one machine at one commit: a host that changed between commits, or a harness
        # that changed between commits, moves every timing at once, and is not the canary's to explain
        commit = str(getattr(r, "git_revision", None) or "")[:7]
        a.machines.append(f"{getattr(r, 'machine', None) or host_of(r)}@{commit}")
        a.canary_all.append(dict((canary or {}).get((str(r.run_id), str(r.engine_id), str(r.suite)), {})))
        s = [math.log(float(x)) for x in (r.samples if r.samples is not None else []) if x is not None and float(x) > 0]
        if len(s) >= 2:
            mu = statistics.fmean(s)
            a.within_ss += sum((x - mu) ** 2 for x in s)
            a.within_df += len(s) - 1
    return acc


def _adjust(acc: dict[tuple[str, ...], _Acc], lib: Any, fits: dict[str, dict[str, Any]]) -> None:
    """Take the canary out of every timed series inside each host, with the component the fit chose (as drift does)."""
    policies: dict[str, dict[str, Any]] = {}
    for a in acc.values():
        _canary_within_hosts(a, policies.setdefault(a.suite, lib.drift_policy(a.suite)), fits)


def _fit(xy: list[tuple[float, float]]) -> dict[str, Any] | None:
    """Least squares through the origin of a timing's deviations (y) on the canary's (x): slope, se, r², spread of x.

    ``decisive`` when the canary moved enough between the runs (``CANARY_FIT_MIN_SD``) and the slope is known to
    within ``CANARY_FIT_MAX_SE``."""
    n = len(xy)
    sxx = sum(x * x for x, _ in xy)
    if n < 3 or sxx <= 0:
        return None
    syy = sum(y * y for _, y in xy)
    sxy = sum(x * y for x, y in xy)
    slope = sxy / sxx
    se = math.sqrt(max(syy - slope * sxy, 0.0) / (n - 1) / sxx)
    sd = math.sqrt(sxx / n)
    return {
        "points": n,
        "canary_sd": _r(sd),
        "slope": _r(slope),
        "se": _r(se),
        "r2": _r(sxy * sxy / (sxx * syy)) if syy > 0 else None,
        "decisive": sd >= CANARY_FIT_MIN_SD and se <= CANARY_FIT_MAX_SE,
    }


def canary_fits(acc: dict[tuple[str, ...], _Acc], policy_of: Any) -> dict[str, dict[str, Any]]:
    """Per suite, workload and the canary component ``drift.json`` gives it: how much of its timings' moves each CPU
    component of the canary explains, which one drift takes out (``use``; None: judged as measured) and how much of its
    move (``coef``).

    Inside each machine at one commit (a ``boot_id``, with or without a CPU quota: a quota run beside full-speed runs of
    the same machine is what moves the canary most; one commit, because a host that changed between commits or a
    harness that changed between commits moves every timing at once, which is not the canary's to explain), every run's
    deviation of a timed series from that machine's mean (log,
    slower positive) against the deviation of the canary beside its cell, pooled over the group's series: the
    least-squares slope through the origin (1: the timing moves as the canary does; 0: not at all; 0.5: half as much,
    as an index build whose parallel workers are only part of its time), its standard error and r², per component.
    Where a fit is decisive (the canary moved, the slope is known), the component with the better r² is taken out
    times its slope; where none is, the policy's component is taken out whole: a timing of CPU work is taken to move
    with the CPU until runs show otherwise, the physics the canary was chosen for.
    """
    pts: dict[tuple[str, str, str], dict[str, list[tuple[float, float]]]] = {}
    series: dict[tuple[str, str, str], int] = {}
    for a in acc.values():
        way = hostspeed.direction(a.unit)
        if a.kind != "timed" or way == 0 or len(a.canary_all) != len(a.logs):
            continue
        group = (a.suite, a.workload, hostspeed.component_for(policy_of(a.suite), a.suite, a.workload, a.variant))
        machines = a.machines if len(a.machines) == len(a.logs) else a.hosts
        by_machine: dict[str, list[int]] = {}
        for i, h in enumerate(machines):
            by_machine.setdefault(h, []).append(i)
        used = False
        for comp in hostspeed.SPEED_COMPONENTS:
            for ix in by_machine.values():
                if len(ix) < 2 or any(comp not in a.canary_all[i] for i in ix):
                    continue
                my = statistics.fmean(a.logs[i] for i in ix)
                mc = statistics.fmean(a.canary_all[i][comp] for i in ix)
                got = pts.setdefault(group, {}).setdefault(comp, [])
                got += [(a.canary_all[i][comp] - mc, way * (a.logs[i] - my)) for i in ix]
                used = True
        if used:
            series[group] = series.get(group, 0) + 1
    out: dict[str, dict[str, Any]] = {}
    for (suite, workload, policy), per in sorted(pts.items()):
        fits = {comp: f for comp, xy in per.items() if (f := _fit(xy)) is not None}
        if not fits:
            continue
        told = {c: f for c, f in fits.items() if f["decisive"]}
        use: str | None
        if policy not in told:
            # the other component replaces the policy's only where it explains the moves (taking it out narrows them:
            # slope - 2 se > 1/2); a weak slope of it says nothing of the policy's component, which then stays whole
            told = {c: f for c, f in told.items() if float(f["slope"]) - 2 * float(f["se"]) > 0.5}
        if not told:
            use, coef, why = (
                policy,
                1.0,
                "the canary moved too little between these runs to tell: taken out whole (CPU work moves with the CPU)",
            )
        else:
            best = max(told, key=lambda c: (float(told[c]["r2"] or 0.0), c == policy))
            coef = min(max(float(told[best]["slope"]), 0.0), CANARY_MAX_COEF)
            if coef < CANARY_MIN_COEF:
                use, why = None, "no component of the canary explains this workload's moves: judged as measured"
            else:
                use = best
                why = (
                    f"{best} explains this workload's moves"
                    + ("" if best == policy else f" better than {policy}")
                    + f": {coef:.2f} of its move"
                )
        out[f"{suite}/{workload}/{policy}"] = {
            "suite": suite,
            "workload": workload,
            "policy": policy,
            "use": use,
            "coef": None if use is None else _r(coef),
            "why": why,
            "series": series.get((suite, workload, policy), 0),
            "fits": fits,
        }
    return out


def _canary_within_hosts(a: _Acc, policy: dict[str, Any], fits: dict[str, dict[str, Any]] | None = None) -> None:
    """Take the canary's move out of a timed series inside each host whose every run had the canary beside its cell.

    Inside a host, the canary measures what moved the host between starts, as drift takes it out of tonight against
    that host's history. Across hosts the means stay as measured (a host faster at SHA-256 is not faster at
    everything by as much), so the between-hosts level is the hosts' own. The series counts as calibrated with the
    canary (``canary``) when most runs of its hosts with two or more runs had one: hosts from before the canary
    keep their raw between-starts spread, which errs on the quiet side.
    """
    way = hostspeed.direction(a.unit)
    if a.kind != "timed" or way == 0 or len(a.canary_all) != len(a.logs):
        return
    take = canary_component(fits, a.suite, a.workload, hostspeed.component_for(policy, a.suite, a.workload, a.variant))
    if take is None:
        return
    comp, coef = take
    cl = [c.get(comp) for c in a.canary_all]
    by_host: dict[str, list[int]] = {}
    for i, h in enumerate(a.hosts):
        by_host.setdefault(h, []).append(i)
    multi = [i for ix in by_host.values() if len(ix) >= 2 for i in ix]
    if not multi or 2 * sum(cl[i] is not None for i in multi) <= len(multi):
        return
    for ix in by_host.values():
        got = [cl[i] for i in ix]
        if any(x is None for x in got):
            continue
        ref = statistics.fmean(float(x) for x in got if x is not None)
        for i in ix:
            a.logs[i] -= way * coef * (float(cl[i] or 0.0) - ref)
    a.canary = comp


def _prior(values: list[tuple[float, float | None]]) -> tuple[float | None, float | None]:
    """(ratio of run-to-run to within-run spread, median run-to-run spread) over series that have both / either."""
    ratios = [r / w for r, w in values if w and w > 0]
    runs = [r for r, _ in values]
    return (statistics.median(ratios) if ratios else None), (statistics.median(runs) if runs else None)


def _shrink(own: float | None, own_df: int, prior: float | None, floor: float = SIGMA_FLOOR) -> float:
    if own is None and prior is None:
        return floor
    if own is None:
        assert prior is not None
        return max(floor, prior)
    if prior is None:
        return max(floor, own)
    var = (own_df * own**2 + PRIOR_DF * prior**2) / (own_df + PRIOR_DF)
    return max(floor, math.sqrt(var))


def _floor(kind: str) -> float:
    return SAMPLED_FLOOR if kind == "sampled" else SIGMA_FLOOR


def _series_entries(acc: dict[tuple[str, ...], _Acc], tails: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Every series' spreads per level, its shrunk sigmas, threshold and mds (``m`` = every series of the record).

    ``sigma`` is the between-starts level (one host against its own history), shrunk towards the suite's prior;
    ``host_sigma`` the between-hosts level on top of it (a history measured on other hosts), shrunk towards the
    suite's median between-hosts spread. Where no host ran a series twice, its sigma is the prior's alone.
    """
    stats: dict[tuple[str, ...], tuple[float | None, int, float | None, float | None, int]] = {}
    pool: dict[tuple[str, str], list[tuple[float, float | None]]] = {}
    host_pool: dict[tuple[str, str], list[float]] = {}
    for key, a in acc.items():
        start, start_df, host, host_df = levels(a.logs, a.hosts)
        within = math.sqrt(a.within_ss / a.within_df) if a.within_df else None
        stats[key] = (start, start_df, within, host, host_df)
        if start is not None:
            pool.setdefault((a.suite, a.kind), []).append((start, within))
        if host is not None:
            host_pool.setdefault((a.suite, a.kind), []).append(host)
    priors = {k: _prior(v) for k, v in pool.items()}
    host_priors = {k: statistics.median(v) for k, v in host_pool.items()}
    for kind in {a.kind for a in acc.values()}:  # a suite without run-to-run data (one usable run) borrows every suite's prior
        priors[("*", kind)] = _prior([x for (_, k), v in pool.items() if k == kind for x in v])
        every = [x for (_, k), v in host_pool.items() if k == kind for x in v]
        host_priors[("*", kind)] = statistics.median(every) if every else 0.0
    m = len(acc)
    out: dict[str, dict[str, Any]] = {}
    for key, a in acc.items():
        run_sd, run_df, within, host_sd, host_df = stats[key]
        ratio, median_run = priors.get((a.suite, a.kind)) or priors.get(("*", a.kind)) or (None, None)
        prior = ratio * within if ratio is not None and within is not None else median_run
        sigma = _shrink(run_sd, run_df, prior, _floor(a.kind))
        host_prior = host_priors.get((a.suite, a.kind), host_priors.get(("*", a.kind), 0.0))
        host_sigma = _shrink(host_sd, host_df, host_prior, 0.0)
        tail = tail_of(tails, a.suite, a.kind)
        thr, mds = thresholds(sigma, m, tail=tail)
        _, mds3 = thresholds(sigma, m, nights=3, tail=tail)
        out[series_key(a.suite, a.engine_id, a.workload, a.variant, a.metric)] = {
            "suite": a.suite,
            "engine_id": a.engine_id,
            "engine_build": _builds(a)[0] if a.builds else a.engine_build,
            "engine_builds": _builds(a),
            "workload": a.workload,
            "variant": a.variant,
            "metric": a.metric,
            "unit": a.unit,
            "kind": a.kind,
            "runs": len(a.logs),
            "hosts": len({_host_of_unit(h) for h in a.hosts}),
            "center": math.exp(statistics.fmean(a.logs)),
            "run_sd": _r(run_sd),
            "run_df": run_df,
            "within_sd": _r(within),
            "within_df": a.within_df,
            "prior_sd": _r(prior),
            "sigma": _r(sigma),
            "host_sd": _r(host_sd),
            "host_df": host_df,
            "host_sigma": _r(host_sigma),
            "threshold": _r(thr),
            "mds": _r(mds),
            "mds_3": _r(mds3),
            "mds_family": _r(family_mds(sigma)),
            "mds_family_3": _r(family_mds(sigma, nights=3)),
            "canary": a.canary,
        }
    return out


def _same_host_others(a: _Acc, j: int) -> list[float]:
    return [x for i, (x, h) in enumerate(zip(a.logs, a.hosts, strict=True)) if i != j and h == a.hosts[j]]


def _loo(
    acc: dict[tuple[str, ...], _Acc], entries: dict[str, dict[str, Any]]
) -> tuple[
    dict[tuple[str, str], list[float]], dict[tuple[str, str], dict[str, list[float]]], dict[tuple[str, str], dict[str, list[float]]]
]:
    """Leave-one-run-out residuals inside each host: per suite and kind every series' standardized z (the null of a lone
    test), per family (suite, engine) and run the deviations of its timed series from their other runs on the same host,
    and per family and host the deviations of that host's mean from the other hosts' means (the between-hosts level).

    A run's deviation is from its host's other runs (a night's reference), divided by the sigma a record of the *other*
    hosts gives the series (their starts, shrunk as :func:`_series_entries` shrinks): the z a night's lone test reads on
    a host the record has never seen, which is every user's. (Dividing by the host's own two or three other runs made
    the tail of a quiet count heavy where those runs happened to agree; dividing by every host's, its own included, made
    it too light for a host new to the record: honest alarms on four hosts' nights in ``drift-recheck``.) A cell's polled
    peaks are judged as lower bounds, not by a lone test, and stay out of the tails."""
    zs: dict[tuple[str, str], list[float]] = {}
    fam: dict[tuple[str, str], dict[str, list[float]]] = {}
    fam_hosts: dict[tuple[str, str], dict[str, list[float]]] = {}
    for a in acc.values():
        e = entries[series_key(a.suite, a.engine_id, a.workload, a.variant, a.metric)]
        peak = is_polled_peak(a.workload, a.metric)  # judged as a lower bound, never by a lone test: not in its tail
        by: dict[str, list[float]] = {}
        for x, h in zip(a.logs, a.hosts, strict=True):
            by.setdefault(h, []).append(x)
        ss_of = {h: sum((x - statistics.fmean(g)) ** 2 for x in g) for h, g in by.items()}
        ss, df = sum(ss_of.values()), sum(len(g) - 1 for g in by.values())
        for j in range(len(a.logs)):
            others = _same_host_others(a, j)
            if not others:
                continue
            dev = a.logs[j] - statistics.fmean(others)
            scale = math.sqrt(1 + 1 / len(others))  # a deviation from n others' mean has (1 + 1/n) sigma^2
            if a.kind == "timed":
                fam.setdefault((a.suite, a.engine_id), {}).setdefault(a.runs[j], []).append(dev / scale)
            # the sigma a record of the other hosts gives the series (noise.levels' between starts, without run j's host)
            df_j = df - (len(by[a.hosts[j]]) - 1)
            start_j = math.sqrt((ss - ss_of[a.hosts[j]]) / df_j) if df_j > 0 else None
            sig = _shrink(start_j, df_j, e["prior_sd"], _floor(a.kind))
            if not peak:
                zs.setdefault((a.suite, a.kind), []).append(dev / (sig * scale))
        if a.kind != "timed":
            continue
        means: dict[str, list[float]] = {}
        for x, h in zip(a.logs, a.hosts, strict=True):
            means.setdefault(h, []).append(x)
        if len(means) < 2:
            continue
        m = {h: statistics.fmean(v) for h, v in means.items()}
        for h, v in m.items():
            rest = [w for hh, w in m.items() if hh != h]
            fam_hosts.setdefault((a.suite, a.engine_id), {}).setdefault(h, []).append(v - statistics.fmean(rest))
    return zs, fam, fam_hosts


def _fit_tails(zs: dict[tuple[str, str], list[float]], borrowed: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """The tail of the leave-one-out |z| of each suite and kind (``<suite>:<kind>``), of each kind over every suite
    (``*:<kind>``) and of all of them (``*``): peaks over the 95 % quantile, exponential excess
    (:func:`jsonbench.history.noise.tail_of` says which a series is judged under).

    Honest timings are heavy-tailed: one run in a hundred moves a series 6-24 of its own sigmas (the
    smoke runs), which a normal null would call a certain regression, and Student's t fitted to the
    whole distribution (1.3-1.9 df) puts the far tail at thousands of sigmas. The far tail is what a
    lone test at ``q / m`` needs, so it is fitted on its own (peaks over threshold with shape 0: the
    mean excess over the 95 % quantile). Counts and volumes (kind ``sampled``) get their own: a timing's
    heavy tail is not theirs. A suite's kind with fewer than 100 residuals uses its kind's pooled fit;
    with none at all (fewer than 3 runs per series) ``borrowed`` (another scale's record of the label) or the defaults.
    """
    groups: dict[str, list[float]] = {}
    for (suite, kind), z in sorted(zs.items()):
        groups[f"{suite}:{kind}"] = z
        groups.setdefault(f"*:{kind}", []).extend(z)
    groups["*"] = [z for v in zs.values() for z in v]
    out: dict[str, dict[str, Any]] = {}
    for name, z in groups.items():
        if len(z) < 100:
            continue
        a = sorted(abs(x) for x in z)
        z0 = a[int(0.95 * (len(a) - 1))]
        excess = [x - z0 for x in a if x > z0]
        beta = max(statistics.fmean(excess) if excess else 1.0, 0.5)
        out[name] = {"z0": round(z0, 3), "beta": round(beta, 3), "share": 0.05, "residuals": len(z), "max": round(a[-1], 2), "fitted": True}
    if "*" not in out:
        if borrowed:
            out.update({k: {**v, "fitted": False, "borrowed": True} for k, v in borrowed.items()})
        else:
            out["*"] = dict(DEFAULT_TAIL)
    return out


def _families(
    fam: dict[tuple[str, str], dict[str, list[float]]],
    builds: dict[str, list[str]],
    canary_suites: frozenset[str] = frozenset(),
    fam_hosts: dict[tuple[str, str], dict[str, list[float]]] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Per family (suite, engine): the between-starts spread of the median deviation of its timed series (a whole-family
    move on one host), and the between-hosts spread of its hosts' medians; and the run-wide level: how far the median
    family of a run moves between starts of one host (every engine at once: the host or the harness).

    Honest runs move a whole engine by a few per cent (the smoke runs: catalogue medians -6 % .. +6 %), and engine
    starts on one host by 5-16 % (one host's second laptop night moved its 12 cells 0.84x to 1.16x with the
    CPU canary steady); the family test must know that, or every honest night is a per-version regression. What every
    family of a suite shares in a run is the host's move (:func:`host_move`), which the drift check takes out first, so
    it is taken out here too. With a handful of runs a family's own spread is a guess, so no family is modelled quieter
    than the median family of its suite (the engines of one suite share its workloads' sizes, hence their
    sensitivity), nor than ``FAMILY_FLOOR``. In a suite whose series had the canary taken out (``canary_suites``) the
    canary is the host's move, and the engines' median is not subtracted there (``sigma``). Beside it, ``CONTRAST``:
    the spread of a family's move less its suite's median engine, over the runs where enough engines ran to say
    (:func:`host_seen`), which is what the drift check tests a version's family by wherever it can.
    """
    by_run = {key: {run: statistics.median(v) for run, v in per_run.items() if v} for key, per_run in fam.items()}
    host: dict[str, dict[str, float]] = {}  # run -> suite -> the host's own move in that run, as the drift check reads it
    seen: dict[str, set[str]] = {}  # run -> the suites whose host move was read from engines beside them
    for run in {r for d in by_run.values() for r in d}:
        moves = {key: d[run] for key, d in by_run.items() if run in d}
        host[run], seen[run] = host_move(moves), host_seen(moves)
    raw: dict[tuple[str, str], tuple[float | None, int]] = {}
    for key in fam:
        meds = [m - (0.0 if key[0] in canary_suites else host[run][key[0]]) for run, m in by_run[key].items()]
        n = len(meds)
        rms = math.sqrt(statistics.fmean(x * x for x in meds)) if meds else None  # deviations already scaled to one start
        raw[key] = (None if rms is None or n < 2 else rms, max(n - 1, 0))
    # Against the suite's other engines that night, where there were enough of them to say (what drift tests, CONTRAST).
    contrast: dict[tuple[str, str], tuple[float | None, int]] = {}
    for key in fam:
        cs = [m - host[run][key[0]] for run, m in by_run[key].items() if key[0] in seen[run]]
        rms = math.sqrt(statistics.fmean(x * x for x in cs)) if cs else None
        contrast[key] = (None if rms is None or len(cs) < 2 else rms, max(len(cs) - 1, 0))
    every_c = [v for v, _ in contrast.values() if v is not None]
    host_raw: dict[tuple[str, str], tuple[float | None, int]] = {}
    for key, per_host in (fam_hosts or {}).items():
        meds = [statistics.median(v) for v in per_host.values() if v]
        h = len(meds)
        host_raw[key] = (math.sqrt(statistics.fmean(x * x for x in meds) / (1 + 1 / (h - 1))) if h >= 2 else None, max(h - 1, 0))
    every = [v for v, _ in raw.values() if v is not None]
    every_host = [v for v, _ in host_raw.values() if v is not None]
    out = {}
    for (suite, engine), (sd, df) in raw.items():
        same = [v for (sx, _), (v, _) in raw.items() if sx == suite and v is not None]
        prior = statistics.median(same or every) if (same or every) else None
        sigma = max(FAMILY_FLOOR, _shrink(sd, df, prior), prior or 0.0)
        hsd, hdf = host_raw.get((suite, engine), (None, 0))
        same_h = [v for (sx, _), (v, _) in host_raw.items() if sx == suite and v is not None]
        hprior = statistics.median(same_h or every_host) if (same_h or every_host) else 0.0
        csd, cdf = contrast[(suite, engine)]
        same_c = [v for (sx, _), (v, _) in contrast.items() if sx == suite and v is not None]
        cprior = statistics.median(same_c or every_c) if (same_c or every_c) else None
        out[f"{suite}/{engine}"] = {
            "suite": suite,
            "engine_id": engine,
            "engine_build": (builds.get(engine) or [""])[0],
            "engine_builds": builds.get(engine, []),
            "series": max((len(v) for v in fam[(suite, engine)].values()), default=0),
            "run_sd": _r(sd),
            "run_df": df,
            "prior_sd": _r(prior),
            "sigma": _r(sigma),
            "host_sd": _r(hsd),
            "host_df": hdf,
            "host_sigma": _r(max(_shrink(hsd, hdf, hprior, 0.0), hprior)),
            "canary": suite in canary_suites,
            "contrast_run_sd": _r(csd),
            "contrast_df": cdf,
            CONTRAST: None if csd is None and cprior is None else _r(max(FAMILY_FLOOR, _shrink(csd, cdf, cprior), cprior or 0.0)),
        }
    common = [statistics.median(ms) for run in host if (ms := [d[run] for d in by_run.values() if run in d])]
    rms = math.sqrt(statistics.fmean(x * x for x in common)) if len(common) >= 2 else None
    level = {"runs": len(common), "run_sd": _r(rms), "sigma": _r(max(FAMILY_FLOOR, rms or 0.0))}
    return out, level


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 5)


def _finding_entries(df: pd.DataFrame, exclude: dict[str, set[str] | None], lib: Any, scale: str) -> dict[str, dict[str, Any]]:
    """Per timing finding and engine: the run-to-run spread of the log of its ratio, shrunk to the suite's median, and its mds."""
    from jsonbench.checks.findings import findings_per_run

    frames = findings_per_run(df, lib, None, scale)
    if not frames:
        return {}
    f = pd.concat(frames, ignore_index=True)
    kinds = {(s, x["id"]): x.get("kind", "timing") for s, d in lib.reproduction.items() for x in d.get("findings", [])}
    logs: dict[tuple[str, str, str], tuple[list[float], list[str]]] = {}
    for r in f.sort_values(["logical_date", "run_id"]).itertuples(index=False):
        if kinds.get((r.suite, r.finding)) != "timing" or r.applicable != "yes" or _excluded(str(r.run_id), str(r.suite), exclude):
            continue
        lv = log_of(finite_float(r.observed))
        if lv is None:
            continue
        xs, runs = logs.setdefault((str(r.suite), str(r.finding), str(r.engine_id)), ([], []))
        xs.append(lv)
        runs.append(str(r.run_id))
    sds = {k: _sd(v[0]) for k, v in logs.items()}
    per_suite: dict[str, list[float]] = {}
    for (suite, _, _), sd in sds.items():
        if sd is not None:
            per_suite.setdefault(suite, []).append(sd)
    every = [sd for v in per_suite.values() for sd in v]
    m = len(logs)
    out: dict[str, dict[str, Any]] = {}
    for (suite, finding, engine), (xs, _runs) in logs.items():
        prior = statistics.median(per_suite.get(suite) or every) if every else None
        sigma = _shrink(sds[(suite, finding, engine)], len(xs) - 1, prior)
        thr, mds = thresholds(sigma, m)
        out[f"{suite}/{finding}/{engine}"] = {
            "suite": suite,
            "finding": finding,
            "engine_id": engine,
            "runs": len(xs),
            "median": math.exp(statistics.median(xs)),
            "run_sd": _r(sds[(suite, finding, engine)]),
            "prior_sd": _r(prior),
            "sigma": _r(sigma),
            "threshold": _r(thr),
            "mds": _r(mds),
        }
    return out


def _summary(series: dict[str, dict[str, Any]], findings: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per suite and kind: how many series, their median sigma and mds; per suite the median mds of its timing findings."""
    out: dict[str, Any] = {}
    for s in series.values():
        d = out.setdefault(s["suite"], {}).setdefault(s["kind"], {"series": 0, "_sig": [], "_mds": [], "_mds3": [], "_f3": []})
        d["series"] += 1
        d["_sig"].append(s["sigma"])
        d["_mds"].append(s["mds"])
        d["_mds3"].append(s["mds_3"])
        d["_f3"].append(s["mds_family_3"])
    for suite, kinds in out.items():
        for d in kinds.values():
            d["median_sigma"] = round(statistics.median(d.pop("_sig")), 4)
            d["median_mds"] = round(statistics.median(d.pop("_mds")), 4)
            d["median_mds_3"] = round(statistics.median(d.pop("_mds3")), 4)
            f3 = d.pop("_f3")
            d["median_mds_family_3"] = round(statistics.median(f3), 4)
            d["share_family_3_within_25pct"] = round(sum(1 for x in f3 if x <= 0.25) / len(f3), 4)
        fm = [f["mds"] for f in findings.values() if f["suite"] == suite]
        kinds["findings"] = {"count": len(fm), "median_mds": round(statistics.median(fm), 4) if fm else None}
    return out


def build_record(
    results_dir: str | Path,
    scale: str,
    hardware_label: str = "local",
    exclude: dict[str, set[str] | None] | None = None,
    why: str = "",
    runs: list[str] | None = None,
    lib: Any = None,
    command: str = "",
    sources: list[tuple[Path, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The calibration record of ``hardware_label`` at ``scale`` from the published runs under ``results_dir``, or under
    every folder of ``sources`` (``(folder, manifest entry)``, as ``recorded/hosts.json`` describes them: the runs of
    several hosts, so that the record holds the between-hosts level too; a suite the entry's ``not_asked`` names without
    ``depends_on`` is left out of that folder, its data having changed since)."""
    from jsonbench.checks.library import load_library

    lib = lib or load_library()
    exclude = exclude or {}
    df = read_runs(sources or [(Path(results_dir), {})], hardware_label, scale)
    if df.empty:
        raise SystemExit(f"no published runs of hardware {hardware_label!r} at scale {scale!r} under {results_dir}")
    if runs:
        df = df[df["run_id"].isin(runs)]
    quota = pd.to_numeric(df["host_cpu_quota"], errors="coerce") if "host_cpu_quota" in df else pd.Series(float("nan"), index=df.index)
    canary = canary_range(df[quota.isna()])  # the speed the levels were measured at: hosts as they are
    table = hostspeed.canary_table(df)
    df = df[df["suite"] != HOST_SUITE]  # the canary is the host's move, not a series of a suite
    if df.empty:
        raise SystemExit(f"no published runs of hardware {hardware_label!r} at scale {scale!r} under {results_dir}")
    # Another design's suites are left out as an --exclude would (what the record is of: the default design).
    designs = other_designs(df)
    exclude = dict(exclude)
    for run_id, suites in designs.items():
        had = exclude.get(run_id, set())
        if had is not None:  # None: the whole run is left out already
            exclude[run_id] = had | suites
    run_rows = []
    for run_id, g in df.sort_values("logical_date").groupby("run_id", sort=False):
        ex = exclude.get(str(run_id), "none")
        run_rows.append(
            {
                "run_id": str(run_id),
                **({"other_design": sorted(designs[str(run_id)])} if str(run_id) in designs else {}),
                "logical_date": pd.Timestamp(g["logical_date"].iloc[0]).isoformat(),
                "git_revision": str(g["git_revision"].iloc[0]) if "git_revision" in g else None,
                "host": str(g["host"].iloc[0]),
                "used": "all suites" if ex == "none" else ("not used" if ex is None else f"all but {', '.join(sorted(ex))}"),
                "cpu_quota": None
                if "host_cpu_quota" not in g or pd.isna(g["host_cpu_quota"].iloc[0])
                else float(g["host_cpu_quota"].iloc[0]),
            }
        )
    # The canary's fit reads every run, a CPU quota's included (what moves the canary most); the levels only the runs of
    # hosts as they are: a run under a quota is a slower machine for a while, not a start or a host of the type.
    policies: dict[str, dict[str, Any]] = {}

    def policy_of(suite: str) -> dict[str, Any]:
        if suite not in policies:
            policies[suite] = lib.drift_policy(suite)
        return policies[suite]

    fits = canary_fits(_series(df, exclude, lib, table), policy_of)
    quota = quota.loc[df.index]
    quota_runs = set(df.loc[quota.notna(), "run_id"].astype(str))
    df = df[quota.isna()]
    if df.empty:
        raise SystemExit(f"no published runs without a CPU quota of hardware {hardware_label!r} at scale {scale!r} under {results_dir}")
    acc = _series(df, exclude, lib, table)
    _adjust(acc, lib, fits)
    for row in run_rows:
        if row["run_id"] in quota_runs and row["used"] != "not used":
            row["used"] = "the canary's fit only (a CPU quota)"
    zs, fam, fam_hosts = _loo(acc, _series_entries(acc))
    other = load_record(hardware_label, "smoke", results_dir) if scale != "smoke" else None
    tails = _fit_tails(zs, (other or {}).get("tails"))
    series = _series_entries(acc, tails)
    # every build each engine's series ran on (drift serves a family's builds as a series', noise.serves)
    builds: dict[str, list[str]] = {}
    for a in acc.values():
        builds[a.engine_id] = sorted(set(builds.get(a.engine_id, [])) | set(a.builds))
    timed = [a for a in acc.values() if a.kind == "timed" and hostspeed.direction(a.unit)]
    canary_suites = frozenset(
        sx
        for sx in {a.suite for a in timed}
        if 2 * sum(a.canary is not None for a in timed if a.suite == sx) > sum(a.suite == sx for a in timed)
    )
    families, common = _families(fam, builds, canary_suites, fam_hosts)
    findings = _finding_entries(df, exclude, lib, scale)
    return {
        "format": FORMAT,
        "hardware_label": hardware_label,
        "scale": scale,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": command,
        "source": str(results_dir) if not sources else [str(f) for f, _ in sources],
        "runs": run_rows,
        "runs_why": why,
        "engines": {str(e): str(b) for e, b in df[["engine_id", "engine_build"]].drop_duplicates().itertuples(index=False)},
        "method": {
            "statistic": "log of the best repetition of a duration or rate, the published value otherwise",
            "fdr_q": FDR_Q,
            "power": POWER,
            "ref_runs": REF_RUNS,
            "prior_df": PRIOR_DF,
            "sigma_floor": SIGMA_FLOOR,
            "sampled_floor": SAMPLED_FLOOR,
            "min_effect": MIN_EFFECT,
            "family_level": FAMILY_LEVEL,
            "family_floor": FAMILY_FLOOR,
            "m_series": len(series),
            "m_findings": len(findings),
            "see": "plugins/jsonbench/history/noise.py, dev/jsonbench_dev/record.py",
        },
        "summary": _summary(series, findings),
        "canary": canary,
        "hosts": hosts_of(df),
        "tails": tails,
        "families": families,
        "common": common,
        "canary_fit": fits,
        "series": series,
        "findings": findings,
    }


def read_runs(sources: list[tuple[Path, dict[str, Any]]], hardware_label: str, scale: str, starts: int | None = 1) -> pd.DataFrame:
    """The published rows of ``hardware_label`` at ``scale`` in every folder, each with its ``host`` (the ``boot_id``; the
    manifest's host name, or the folder's, for rows from before the column; with ``+quota<cores>`` for a run under a CPU
    quota) and its ``machine`` (the ``boot_id`` alone), without windows the host was busy in
    (``quiet`` false: drift leaves them out of every history too) and without suites the manifest does not ask.

    One start's rows only (``starts``; None: every design): figures that rest on several engine starts (the run parameter
    ``starts``) are a statistic of another spread, which a record of their own will read once nights of that design are
    recorded."""
    from jsonbench.cell import starts_of
    from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report

    frames = []
    for folder, entry in sources:
        df = read_dataset_report(folder, MEASUREMENTS, hardware_label=hardware_label).table.to_pandas()
        df = df[df["scale"] == scale]
        stale = {str(r.get("suite")) for r in entry.get("not_asked", []) if not r.get("depends_on")}
        df = df[~df["suite"].isin(stale)]
        if "scale_params" in df and starts is not None:
            # The canary's rows stay with the runs that measured this design: a run of another design alone would be
            # read as a night with nothing but the canary (drift-recheck once counted two-start nights as such).
            host_rows = df["suite"] == HOST_SUITE
            mine = ~host_rows & (df["scale_params"].map(starts_of) == starts)
            df = df[mine | (host_rows & df["run_id"].isin(set(df.loc[mine, "run_id"])))]
        if "quiet" in df:
            df = df[(df["suite"] == HOST_SUITE) | (df["quiet"].astype("boolean").fillna(True).astype(bool))]
        fallback = str(entry.get("host") or (folder.name if len(sources) > 1 else ""))
        boot = (
            df["host_boot_id"].astype("string").fillna(fallback).replace("", fallback)
            if "host_boot_id" in df
            else pd.Series(fallback, index=df.index)
        )
        machine = [str(b) for b in boot]
        # A run under a CPU quota is a host of its own for the levels (a slower machine, not a start of this one); its
        # machine stays the ``boot_id``, which the canary's fit reads (the quota is what moves the canary most).
        quota = pd.to_numeric(df["host_cpu_quota"], errors="coerce") if "host_cpu_quota" in df else pd.Series(float("nan"), index=df.index)
        host = [m if pd.isna(q) else f"{m}+quota{float(q):g}" for m, q in zip(machine, quota, strict=True)]
        frames.append(df.assign(host=host, machine=machine, folder=str(folder)))
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["suite", "run_id", "scale"])


def canary_range(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """At which host speed a record was calibrated: per canary component, the median, min and max ms over its runs' canaries."""
    host = df[(df["suite"] == HOST_SUITE) & (df["status"] == "ok") & (df["unit"] == "ms")] if "suite" in df else df.iloc[0:0]
    out: dict[str, dict[str, Any]] = {}
    for comp, g in host.groupby("metric"):
        vals = [float(v) for v in g["value"] if v is not None and math.isfinite(float(v))]
        if vals:
            out[str(comp)] = {
                "median_ms": _r(statistics.median(vals)),
                "min_ms": _r(min(vals)),
                "max_ms": _r(max(vals)),
                "canaries": len(vals),
            }
    return out


def hosts_of(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The hosts a record's runs were measured on (``boot_id``, machine id, CPU quota), each with its runs."""
    cols = [c for c in ("host_boot_id", "host_machine_id", "host_cpu_quota") if c in df]
    if not cols or df.empty:
        return []
    out = []
    for key, g in df.groupby(cols, dropna=False):
        vals = key if isinstance(key, tuple) else (key,)
        rec = {c: (None if pd.isna(v) else v) for c, v in zip(cols, vals, strict=True)}
        rec["runs"] = sorted({str(r) for r in g["run_id"]})
        out.append(rec)
    return out


def dumps(record: dict[str, Any]) -> str:
    """The record as JSON a diff can read: one line per series, finding and family, everything else indented."""
    lines = ["{"]
    items = list(record.items())
    for i, (k, v) in enumerate(items):
        end = "," if i < len(items) - 1 else ""
        if k in ("series", "findings", "families", "canary_fit") and isinstance(v, dict):
            lines.append(f" {json.dumps(k)}: {{")
            entries = list(v.items())
            for j, (sk, sv) in enumerate(entries):
                lines.append(f"  {json.dumps(sk)}: {json.dumps(sv, separators=(',', ':'))}" + ("," if j < len(entries) - 1 else ""))
            lines.append(" }" + end)
        else:
            lines.append(f" {json.dumps(k)}: " + json.dumps(v, indent=1).replace("\n", "\n ") + end)
    return "\n".join(lines) + "\n}\n"


#: The first key of every record written: the command that regenerates the file (its readers ignore the key).
GENERATED_BY = "bin/jsonbench-dev calibrate --record (or bin/jsonbench-dev campaign); the exact command is under `command`"


def write_record(record: dict[str, Any], results_dir: str | Path | None = None) -> Path:
    """Write ``record`` where :func:`load_record` finds it (atomically: a reader never sees half a file), saying first
    which command regenerates it."""
    from jsonbench.dataset.fsio import write_text_atomic

    p = record_path(record["hardware_label"], record["scale"], results_dir)
    record = {"_generated_by": GENERATED_BY, **{k: v for k, v in record.items() if k != "_generated_by"}}
    write_text_atomic(p, dumps(record), "calibration record")
    return p


def render_record(record: dict[str, Any]) -> str:
    """A short text of the record: its runs, and per suite the median sigma and mds of each kind and of the findings."""
    lines = [
        f"calibration of hardware {record['hardware_label']!r} at scale {record['scale']!r} ({record['created_at']}), "
        f"{len(record['series'])} series, {len(record['findings'])} timing findings"
    ]
    for r in record["runs"]:
        lines.append(f"  run {r['run_id']}: {r['used']}")
    if record.get("runs_why"):
        lines.append(f"  why: {record['runs_why']}")
    for name, t in sorted((record.get("tails") or {}).items()):
        lines.append(
            f"  tail of a lone series' null, {name}: beyond |z| {t['z0']} (5 %) mean excess {t['beta']} "
            f"({t['residuals']} residuals{', borrowed' if t.get('borrowed') else ''}{', default' if not t.get('fitted') and not t.get('borrowed') else ''})"
        )
    fits = record.get("canary_fit") or {}
    if fits:
        other = sorted(k for k, f in fits.items() if f.get("use") not in (None, f.get("policy")))
        none = sorted(k for k, f in fits.items() if f.get("use") is None)
        whole = sum(1 for f in fits.values() if "too little" in str(f.get("why")))
        lines.append(
            f"  canary fit: {len(fits)} workload groups; fitted {len(fits) - whole} (the other component: {len(other)}"
            f"{' ' + ', '.join(other) if other else ''}; none: {len(none)}{' ' + ', '.join(none) if none else ''}), "
            f"too little canary movement to tell {whole}"
        )
    for suite, kinds in sorted(record["summary"].items()):
        for kind, d in kinds.items():
            if kind == "findings":
                mds = "-" if d["median_mds"] is None else f"{d['median_mds']:.1%}"
                lines.append(f"  {suite:<24} findings  {d['count']:>5}  median mds {mds}")
            else:
                lines.append(
                    f"  {suite:<24} {kind:<9} {d['series']:>5}  median sigma {d['median_sigma']:.1%}  median mds {d['median_mds']:.1%}"
                    f" (3 nights {d['median_mds_3']:.1%}; whole engine, 3 nights {d['median_mds_family_3']:.1%}, "
                    f"{d['share_family_3_within_25pct']:.0%} <= 25 %)"
                )
    return "\n".join(lines)
