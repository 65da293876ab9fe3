"""The noise model: how much honest runs of one hardware label, scale and engine build move, per series and per finding.

A drift threshold of one size for every timing (``min_magnitude`` 0.5, a 1.5x change) is blind to a
1.25x regression of a series that moves 2 % between runs, and too eager for one that moves 30 %.
This module measures the noise instead, from recorded honest runs, and stores it as a
**calibration record** that names its runs, so that every threshold can be derived again from data
that exists:

* label ``local`` (this project's machine type): ``include/calibration/local/<scale>.json``,
  committed; any other label: ``<results>/calibration/<label>/<scale>.json``.
* ``python -m jsonbench.cli calibrate --scale S --results-dir D --record`` writes it (``--exclude
  RUN[::SUITE,...]`` leaves a known disturbed run, or some of its suites, out, with ``--why``);
  ``python -m jsonbench.cli campaign`` runs N honest reruns and then does the same.

What one series holds (a series is suite, engine id, engine build, workload, variant and metric of
a ``timed`` or ``sampled`` metric; deterministic ones have no noise to model):

* ``run_sd``: the run-to-run standard deviation of the log of the run's statistic (the statistic
  drift tests: the best repetition of a timing, the published value otherwise), with ``run_df``
  degrees of freedom (runs used minus one);
* ``within_sd``: the pooled standard deviation of the log of the samples inside each run (the
  repetitions), with ``within_df``;
* ``sigma``: the noise drift uses, ``run_sd`` shrunk towards a prior of the suite and kind (the
  median ratio of run-to-run to within-run spread of the suite's series with run-to-run data, times
  this series' ``within_sd``; or the suite's median ``run_sd`` when the series has no repetitions;
  a suite with no run-to-run data at all, one usable run, borrows the prior of every suite),
  weighted ``run_df`` against ``PRIOR_DF``: with two to four runs a series' own spread is a guess,
  and the prior stops one lucky pair of runs from making a hair-trigger. ``sigma`` is never below
  ``SIGMA_FLOOR`` (timer resolution and rounding);
* ``threshold``: the smallest relative change that reaches significance for a lone series (at
  the Benjamini-Hochberg level of one discovery among the run's ``m`` series, ``q / m``, two-sided),
  one night against ``REF_RUNS`` earlier runs, and never below ``MIN_EFFECT``;
* ``mds``: the minimum detectable shift: the change caught with probability ``POWER`` under the
  same conditions; ``mds_3`` the same for a shift that has lasted three nights (drift tests the
  mean of the last 1, 2 and 3 runs).

Each timing finding (``<suite>.reproduction.json``, kind ``timing``) per engine gets the run-to-run
spread of the log of its observed ratio, shrunk to the suite's median the same way, and its
``mds`` (a lone test among the run's timing findings). The summary gives the median ``mds`` per
suite.

Test statistics use the normal distribution, not Student's t at the few degrees of freedom the
runs give: t at 3 to 10 df would demand 8-70 sigma at ``q / m`` and make every threshold useless;
the shrinkage towards a prior pooled over hundreds of series, the floor, and the confirmation of
a failed verdict by a second measurement (contract C3) carry the uncertainty instead.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench import paths
from jsonbench.checks import hostspeed
from jsonbench.checks.hostspeed import DURATION_UNITS, RATE_UNITS
from jsonbench.dataset.measurement import HOST_SUITE, finite_float

FORMAT = 1
#: The significance level of the run's false-discovery control (Benjamini-Hochberg).
FDR_Q = 0.01
#: The probability of catching a shift of the minimum detectable size.
POWER = 0.8
#: How many earlier runs a threshold and mds are quoted against (drift needs one; three is the usual history).
REF_RUNS = 3
#: How many families (engine x suite) a run needs before their common move is read as the host's: the median of three
#: is one that did not move when one engine regressed; of two it would be half the regression.
HOST_MIN_FAMILIES = 3


def host_move(moves: dict[tuple[str, str], float]) -> dict[str, float]:
    """The host's own move, per suite, from each family's (suite, engine) median change of one night or window.

    A host that slows moves every engine together, and moves each suite by its own sensitivity (on the
    2-core laptop reruns of 2026-12-01 the catalogue's pgbench workloads moved +8 to +11 % on all three
    PostgreSQL versions while json_vs_jsonb moved +2 %). So the host's move for a suite is the median of
    that suite's engines when it has ``HOST_MIN_FAMILIES`` of them; otherwise the median of every family
    of the run when there are that many; otherwise 0 (one engine alone cannot be told from the host).
    """
    every = list(moves.values())
    overall = statistics.median(every) if len(every) >= HOST_MIN_FAMILIES else 0.0
    out: dict[str, float] = {}
    for suite in {sx for sx, _ in moves}:
        mine = [v for (sx, _), v in moves.items() if sx == suite]
        out[suite] = statistics.median(mine) if len(mine) >= HOST_MIN_FAMILIES else overall
    return out


#: Weight (in degrees of freedom) of the suite's prior against a series' own run-to-run spread.
PRIOR_DF = 4
#: No series is modelled as quieter than this (log units, about 2 %): runs made one after another cannot see what moves
#: between nights (the page cache, the kernel, the room's temperature), and 2 % is the median run-to-run spread of the
#: quietest suite over the recorded smoke runs (sqlite_jsonb).
SIGMA_FLOOR = 0.02
#: The floor of a sampled series (a count or a volume: WAL bytes, HOT counts): its own spread decides, down to
#: 0.1 %. Seed 004's WAL bytes move 0.002 % between runs; a 2 % floor let a planted +3 % pass (issue 25).
SAMPLED_FLOOR = 0.001
#: No family (an engine's suite) is modelled as moving less than this as a whole between runs: the recorded smoke
#: runs moved whole families by up to 5.5 % (catalogue) and 9 % (large_document_update) between honest runs.
FAMILY_FLOOR = 0.025
#: No change smaller than this alarms, however quiet the series (Nyrkioe ignores < 5 %).
MIN_EFFECT = 0.05
#: Units whose values are durations (smaller is better) or rates (larger is better), said once in hostspeed; drift takes
#: their best repetition.
#: Fallback for rows without a metric kind (the kinds contract C1 not yet in the data): these units are timed.
TIMED_UNITS = RATE_UNITS | DURATION_UNITS | {"x"}


def norm_isf(p: float) -> float:
    """The upper ``p`` quantile of the standard normal distribution."""
    return -statistics.NormalDist().inv_cdf(p)


def norm_sf(z: float) -> float:
    """The upper tail probability of the standard normal distribution at ``z``."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


#: The tail of a lone series' null when the record cannot fit one (fewer than 3 runs per series) and no record of the
#: label at another scale lends its own: the 5 % of |z| beyond ``z0`` decay exponentially with mean excess ``beta``.
DEFAULT_TAIL = {"z0": 3.0, "beta": 2.0, "share": 0.05, "residuals": 0, "fitted": False}


def series_key(suite: str, engine_id: str, workload: str, variant: str, metric: str) -> str:
    """The record's key of one series (the engine build is stored inside and must match too)."""
    return "/".join((suite, engine_id, workload, variant, metric))


def record_path(hardware_label: str, scale: str, results_dir: str | Path | None = None) -> Path:
    """Where the record of ``hardware_label`` at ``scale`` lives: committed for ``local``, else under the results."""
    if hardware_label == "local":
        return paths.include_dir() / "calibration" / "local" / f"{scale}.json"
    return paths.results_dir(results_dir) / "calibration" / hardware_label / f"{scale}.json"


def load_record(hardware_label: str, scale: str, results_dir: str | Path | None = None) -> dict[str, Any] | None:
    """The calibration record of a label and scale, or None when there is none (drift falls back to Otava alone)."""
    p = record_path(hardware_label, scale, results_dir)
    if not p.exists():
        return None
    rec: dict[str, Any] = json.loads(p.read_text())
    return rec


def shift_for(z: float, se: float) -> float:
    """The relative change whose log is ``z`` standard errors ``se``: symmetric in log space, quoted upwards (at most 100x)."""
    return math.exp(min(z * se, math.log(100.0))) - 1.0


def lone_z(m: int, q: float = FDR_Q) -> float:
    """The two-sided critical z of one discovery among ``m`` tests under Benjamini-Hochberg at ``q``."""
    return norm_isf(q / (2 * max(m, 1)))


def tail_z(p: float, tail: dict[str, Any] | None) -> float:
    """The |z| whose two-sided p-value is ``p`` under the record's tail (``tail``), or the normal one without."""
    if not tail:
        return norm_isf(p / 2)
    return float(tail["z0"]) + float(tail["beta"]) * max(0.0, math.log(float(tail["share"]) / p))


def tail_p(z: float, tail: dict[str, Any] | None) -> float:
    """The two-sided p-value of ``z`` under the honest runs' tail (peaks over threshold, exponential excess); normal without."""
    if not tail:
        return 2 * norm_sf(abs(z))
    return min(1.0, float(tail["share"]) * math.exp(-(abs(z) - float(tail["z0"])) / float(tail["beta"])))


#: The level a series of a selected family (an engine's suite that moved as a whole) is tested at when a whole
#: engine version moves: Benjamini-Bogomolov's q * R / F with R about 3 of F about 12 families, two-sided.
FAMILY_LEVEL = FDR_Q / 4


def thresholds(
    sigma: float, m: int, ref_runs: int = REF_RUNS, nights: int = 1, q: float = FDR_Q, tail: dict[str, Any] | None = None
) -> tuple[float, float]:
    """(threshold, mds) of a lone series: the change that is significant, and the change caught with probability ``POWER``."""
    se = sigma * math.sqrt(1.0 / nights + 1.0 / max(ref_runs, 1))
    z = tail_z(q / max(m, 1), tail)
    return max(MIN_EFFECT, shift_for(z, se)), max(MIN_EFFECT, shift_for(z + norm_isf(1 - POWER), se))


def family_mds(sigma: float, ref_runs: int = REF_RUNS, nights: int = 1) -> float:
    """The mds of a series when its whole family (suite and engine) moved: tested at ``FAMILY_LEVEL``, normal."""
    se = sigma * math.sqrt(1.0 / nights + 1.0 / max(ref_runs, 1))
    return max(MIN_EFFECT, shift_for(norm_isf(FAMILY_LEVEL / 2) + norm_isf(1 - POWER), se))


def kind_of(suite: str, workload: str, metric: str, unit: str, declared: Any = None, deterministic: bool | None = None) -> str:
    """The metric's kind (C1): the row's ``metric_kind``, else the suite's declaration, else a fallback by unit.

    The fallback serves rows published before the kinds existed and suites that do not declare them
    yet: ``deterministic`` when the drift policy says so, ``timed`` for duration, rate and speed-up
    units, ``sampled`` for everything else that varies.
    """
    if isinstance(declared, str) and declared in ("deterministic", "sampled", "timed"):
        return declared
    try:
        from jsonbench.suites import get_suite

        k = get_suite(suite).metric_kind(workload, metric)
        if k in ("deterministic", "sampled", "timed"):
            return str(k)
    except Exception:  # a suite without declared kinds (contract C1 not merged): the fallback below
        pass
    if deterministic:
        return "deterministic"
    return "timed" if unit in TIMED_UNITS else "sampled"


def statistic(unit: str, value: Any, samples: Any) -> float | None:
    """The one number a run contributes to a series: the best repetition of a duration or rate, else the value."""
    pts = [float(x) for x in samples if x is not None and math.isfinite(float(x))] if samples is not None and len(samples) else []
    if pts and unit in RATE_UNITS:
        return max(pts)
    if pts and unit in DURATION_UNITS:
        return min(pts)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def log_of(x: float | None) -> float | None:
    """Noise is modelled in log space (a 10 % slowdown is the same shift on a 1 ms and a 1 s series); non-positive values have none."""
    return math.log(x) if x is not None and x > 0 else None


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
    hosts: list[str]  # the host (boot id) of each run: between starts is measured inside a host, between hosts across them
    within_ss: float = 0.0
    within_df: int = 0
    canary: str | None = None  # the canary component taken out of ``logs`` (every run had it), else None
    canary_logs: list[float | None] | None = None


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


def _series(df: pd.DataFrame, exclude: dict[str, set[str] | None], lib: Any, canary: Any = None) -> dict[tuple[str, ...], _Acc]:
    """Every statistical series of ``df``'s runs, each run with its host; a timed one has the canary's move beside its
    cell (``canary``: :func:`jsonbench.checks.hostspeed.canary_table`) taken out inside each host, as drift does
    (:func:`_canary_within_hosts`)."""
    from jsonbench.checks.rules import rule_for

    acc: dict[tuple[str, ...], _Acc] = {}
    policies: dict[str, dict[str, Any]] = {}
    rules: dict[tuple[str, ...], bool] = {}
    for r in df.sort_values(["logical_date", "run_id"]).itertuples(index=False):
        if r.status != "ok" or _excluded(str(r.run_id), str(r.suite), exclude):
            continue
        rk = (r.suite, r.workload, r.variant, r.metric, r.unit)
        if rk not in rules:
            rules[rk] = rule_for(lib.drift_policy(r.suite), *rk).kind == "deterministic"
        kind = kind_of(r.suite, r.workload, r.metric, r.unit, getattr(r, "metric_kind", None), rules[rk])
        if kind == "deterministic":
            continue
        lv = log_of(statistic(r.unit, r.value, r.samples))
        if lv is None:
            continue
        build = "" if r.engine_build is None or (isinstance(r.engine_build, float)) else str(r.engine_build)
        key = (r.suite, r.engine_id, build, r.workload, r.variant, r.metric)
        a = acc.get(key)
        if a is None:
            a = acc[key] = _Acc(r.suite, r.engine_id, build, r.workload, r.variant, r.metric, r.unit, kind, [], [], [])
        if a.runs and a.runs[-1] == str(r.run_id):
            continue
        a.logs.append(lv)
        a.runs.append(str(r.run_id))
        a.hosts.append(host_of(r))
        if a.canary_logs is None:
            a.canary_logs = []
        got: float | None = None
        if kind == "timed" and hostspeed.direction(str(r.unit)):
            policy = policies.setdefault(str(r.suite), lib.drift_policy(r.suite))
            comp = hostspeed.component_for(policy, str(r.suite), str(r.workload), str(r.variant))
            got = (canary or {}).get((str(r.run_id), str(r.engine_id), str(r.suite)), {}).get(comp)
        a.canary_logs.append(got)
        s = [math.log(float(x)) for x in (r.samples if r.samples is not None else []) if x is not None and float(x) > 0]
        if len(s) >= 2:
            mu = statistics.fmean(s)
            a.within_ss += sum((x - mu) ** 2 for x in s)
            a.within_df += len(s) - 1
    for a in acc.values():
        _canary_within_hosts(a, policies.get(a.suite) or lib.drift_policy(a.suite))
    return acc


def _canary_within_hosts(a: _Acc, policy: dict[str, Any]) -> None:
    """Take the canary's move out of a timed series inside each host whose every run had the canary beside its cell.

    Inside a host, the canary measures what moved the host between starts, as drift takes it out of tonight against
    that host's history. Across hosts the means stay as measured (a host faster at SHA-256 is not faster at
    everything by as much), so the between-hosts level is the hosts' own. The series counts as calibrated with the
    canary (``canary``) when most runs of its hosts with two or more runs had one: hosts from before the canary
    keep their raw between-starts spread, which errs on the quiet side.
    """
    cl = a.canary_logs or []
    way = hostspeed.direction(a.unit)
    if a.kind != "timed" or not cl or way == 0:
        return
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
            a.logs[i] -= way * (float(cl[i] or 0.0) - ref)
    a.canary = hostspeed.component_for(policy, a.suite, a.workload, a.variant)


def host_of(r: Any) -> str:
    """The host a row was measured on: the ``host`` a record's reader set (the boot id, or the manifest's name for rows
    from before the column), else the row's boot id, else "" (one unknown host)."""
    for col in ("host", "host_boot_id"):
        v = getattr(r, col, None)
        if isinstance(v, str) and v:
            return v
    return ""


def levels(logs: list[float], hosts: list[str]) -> tuple[float | None, int, float | None, int]:
    """(between starts sd, its df, between hosts sd of the host means, its df) of one series' log statistics.

    Between starts is pooled inside each host (the sd of a host's runs around that host's mean), so a second host
    never inflates it; between hosts is the sd of the hosts' means, with what the starts alone put into those means
    taken out (method of moments, at least 0). Issue 37's levels: a host judged against its own history needs only the
    first; a history of other hosts needs both.
    """
    by: dict[str, list[float]] = {}
    for x, h in zip(logs, hosts, strict=True):
        by.setdefault(h, []).append(x)
    ss = sum(sum((x - statistics.fmean(g)) ** 2 for x in g) for g in by.values() if len(g) >= 2)
    df = sum(len(g) - 1 for g in by.values())
    start = math.sqrt(ss / df) if df else None
    means = [statistics.fmean(g) for g in by.values()]
    if len(means) < 2:
        return start, df, None, 0
    between = statistics.variance(means) - (start or 0.0) ** 2 * statistics.fmean(1.0 / len(g) for g in by.values())
    return start, df, math.sqrt(max(between, 0.0)), len(means) - 1


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
        sigma = _shrink(run_sd, run_df, prior, SAMPLED_FLOOR if a.kind == "sampled" else SIGMA_FLOOR)
        host_prior = host_priors.get((a.suite, a.kind), host_priors.get(("*", a.kind), 0.0))
        host_sigma = _shrink(host_sd, host_df, host_prior, 0.0)
        tail = (tails or {}).get(a.suite) or (tails or {}).get("*")
        thr, mds = thresholds(sigma, m, tail=tail)
        _, mds3 = thresholds(sigma, m, nights=3, tail=tail)
        out[series_key(a.suite, a.engine_id, a.workload, a.variant, a.metric)] = {
            "suite": a.suite,
            "engine_id": a.engine_id,
            "engine_build": a.engine_build,
            "workload": a.workload,
            "variant": a.variant,
            "metric": a.metric,
            "unit": a.unit,
            "kind": a.kind,
            "runs": len(a.logs),
            "hosts": len(set(a.hosts)),
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
) -> tuple[dict[str, list[float]], dict[tuple[str, str], dict[str, list[float]]], dict[tuple[str, str], dict[str, list[float]]]]:
    """Leave-one-run-out residuals inside each host: per suite every series' standardized z (the null of a lone test),
    per family (suite, engine) and run the deviations of its timed series from their other runs on the same host, and
    per family and host the deviations of that host's mean from the other hosts' means (the between-hosts level)."""
    zs: dict[str, list[float]] = {}
    fam: dict[tuple[str, str], dict[str, list[float]]] = {}
    fam_hosts: dict[tuple[str, str], dict[str, list[float]]] = {}
    for a in acc.values():
        e = entries[series_key(a.suite, a.engine_id, a.workload, a.variant, a.metric)]
        for j in range(len(a.logs)):
            others = _same_host_others(a, j)
            if not others:
                continue
            dev = a.logs[j] - statistics.fmean(others)
            scale = math.sqrt(1 + 1 / len(others))  # a deviation from n others' mean has (1 + 1/n) sigma^2
            if a.kind == "timed":
                fam.setdefault((a.suite, a.engine_id), {}).setdefault(a.runs[j], []).append(dev / scale)
            sig = _shrink(_sd(others), len(others) - 1, e["prior_sd"]) if len(others) >= 2 else float(e["sigma"])
            zs.setdefault(a.suite, []).append(dev / (sig * scale))
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


def _fit_tails(zs: dict[str, list[float]], borrowed: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """The tail of each suite's leave-one-out |z|, and of all of them ("*"): peaks over the 95 % quantile, exponential excess.

    Honest timings are heavy-tailed: one run in a hundred moves a series 6-24 of its own sigmas (the
    smoke runs), which a normal null would call a certain regression, and Student's t fitted to the
    whole distribution (1.3-1.9 df) puts the far tail at thousands of sigmas. The far tail is what a
    lone test at ``q / m`` needs, so it is fitted on its own (peaks over threshold with shape 0: the
    mean excess over the 95 % quantile). A suite with fewer than 100 residuals uses the pooled fit;
    with none at all (fewer than 3 runs per series) ``borrowed`` (another scale's record of the label) or the defaults.
    """
    out: dict[str, dict[str, Any]] = {}
    pooled = [z for v in zs.values() for z in v]
    for name, z in [*zs.items(), ("*", pooled)]:
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
    builds: dict[str, str],
    canary_suites: frozenset[str] = frozenset(),
    fam_hosts: dict[tuple[str, str], dict[str, list[float]]] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Per family (suite, engine): the between-starts spread of the median deviation of its timed series (a whole-family
    move on one host), and the between-hosts spread of its hosts' medians; and the run-wide level: how far the median
    family of a run moves between starts of one host (every engine at once: the host or the harness).

    Honest runs move a whole engine by a few per cent (the smoke runs: catalogue medians -6 % .. +6 %), and engine
    starts on one host by 5-16 % (issue 37: 0ded6d5b's second laptop night moved its 12 cells 0.84x to 1.16x with the
    CPU canary steady); the family test must know that, or every honest night is a per-version regression. What every
    family of a suite shares in a run is the host's move (:func:`host_move`), which the drift check takes out first, so
    it is taken out here too. With a handful of runs a family's own spread is a guess, so no family is modelled quieter
    than the median family of its suite (the engines of one suite share its workloads' sizes, hence their
    sensitivity), nor than ``FAMILY_FLOOR``. In a suite whose series had the canary taken out (``canary_suites``) the
    canary is the host's move, and the engines' median is not subtracted: as in the drift check, where it is only a
    second opinion there.
    """
    by_run = {key: {run: statistics.median(v) for run, v in per_run.items() if v} for key, per_run in fam.items()}
    host: dict[str, dict[str, float]] = {}  # run -> suite -> the host's own move in that run, as the drift check reads it
    for run in {r for d in by_run.values() for r in d}:
        host[run] = host_move({key: d[run] for key, d in by_run.items() if run in d})
    raw: dict[tuple[str, str], tuple[float | None, int]] = {}
    for key in fam:
        meds = [m - (0.0 if key[0] in canary_suites else host[run][key[0]]) for run, m in by_run[key].items()]
        n = len(meds)
        rms = math.sqrt(statistics.fmean(x * x for x in meds)) if meds else None  # deviations already scaled to one start
        raw[key] = (None if rms is None or n < 2 else rms, max(n - 1, 0))
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
        out[f"{suite}/{engine}"] = {
            "suite": suite,
            "engine_id": engine,
            "engine_build": builds.get(engine, ""),
            "series": max((len(v) for v in fam[(suite, engine)].values()), default=0),
            "run_sd": _r(sd),
            "run_df": df,
            "prior_sd": _r(prior),
            "sigma": _r(sigma),
            "host_sd": _r(hsd),
            "host_df": hdf,
            "host_sigma": _r(max(_shrink(hsd, hdf, hprior, 0.0), hprior)),
            "canary": suite in canary_suites,
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
    canary = canary_range(df)
    table = hostspeed.canary_table(df)
    df = df[df["suite"] != HOST_SUITE]  # the canary is the host's move, not a series of a suite
    if df.empty:
        raise SystemExit(f"no published runs of hardware {hardware_label!r} at scale {scale!r} under {results_dir}")
    run_rows = []
    for run_id, g in df.sort_values("logical_date").groupby("run_id", sort=False):
        ex = exclude.get(str(run_id), "none")
        run_rows.append(
            {
                "run_id": str(run_id),
                "logical_date": pd.Timestamp(g["logical_date"].iloc[0]).isoformat(),
                "git_revision": str(g["git_revision"].iloc[0]) if "git_revision" in g else None,
                "host": str(g["host"].iloc[0]),
                "used": "all suites" if ex == "none" else ("not used" if ex is None else f"all but {', '.join(sorted(ex))}"),
            }
        )
    acc = _series(df, exclude, lib, table)
    zs, fam, fam_hosts = _loo(acc, _series_entries(acc))
    other = load_record(hardware_label, "smoke", results_dir) if scale != "smoke" else None
    tails = _fit_tails(zs, (other or {}).get("tails"))
    series = _series_entries(acc, tails)
    builds = {str(e): str(b) for e, b in df[["engine_id", "engine_build"]].drop_duplicates().itertuples(index=False)}
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
            "see": "plugins/jsonbench/checks/noise.py",
        },
        "summary": _summary(series, findings),
        "canary": canary,
        "hosts": hosts_of(df),
        "tails": tails,
        "families": families,
        "common": common,
        "series": series,
        "findings": findings,
    }


def read_runs(sources: list[tuple[Path, dict[str, Any]]], hardware_label: str, scale: str) -> pd.DataFrame:
    """The published rows of ``hardware_label`` at ``scale`` in every folder, each with its ``host`` (the boot id; the
    manifest's host name, or the folder's, for rows from before the column), without windows the host was busy in
    (``quiet`` false: drift leaves them out of every history too) and without suites the manifest does not ask."""
    from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report

    frames = []
    for folder, entry in sources:
        df = read_dataset_report(folder, MEASUREMENTS, hardware_label=hardware_label).table.to_pandas()
        df = df[df["scale"] == scale]
        stale = {str(r.get("suite")) for r in entry.get("not_asked", []) if not r.get("depends_on")}
        df = df[~df["suite"].isin(stale)]
        if "quiet" in df:
            df = df[(df["suite"] == HOST_SUITE) | (df["quiet"].astype("boolean").fillna(True).astype(bool))]
        fallback = str(entry.get("host") or (folder.name if len(sources) > 1 else ""))
        boot = (
            df["host_boot_id"].astype("string").fillna(fallback).replace("", fallback)
            if "host_boot_id" in df
            else pd.Series(fallback, index=df.index)
        )
        frames.append(df.assign(host=boot.astype(str)))
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
    """The hosts a record's runs were measured on (boot id, machine id, CPU quota), each with its runs."""
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
        if k in ("series", "findings", "families") and isinstance(v, dict):
            lines.append(f" {json.dumps(k)}: {{")
            entries = list(v.items())
            for j, (sk, sv) in enumerate(entries):
                lines.append(f"  {json.dumps(sk)}: {json.dumps(sv, separators=(',', ':'))}" + ("," if j < len(entries) - 1 else ""))
            lines.append(" }" + end)
        else:
            lines.append(f" {json.dumps(k)}: " + json.dumps(v, indent=1).replace("\n", "\n ") + end)
    return "\n".join(lines) + "\n}\n"


def write_record(record: dict[str, Any], results_dir: str | Path | None = None) -> Path:
    """Write ``record`` where :func:`load_record` finds it (atomically: a reader never sees half a file)."""
    from jsonbench.dataset.fsio import write_text_atomic

    p = record_path(record["hardware_label"], record["scale"], results_dir)
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


def status(results_dir: str | Path | None = None, labels: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Per label and scale with a record: when it was calibrated and from how many runs (the report's block)."""
    out = []
    roots = [(paths.include_dir() / "calibration", True), (paths.results_dir(results_dir) / "calibration", False)]
    seen: set[tuple[str, str]] = set()
    for root, _committed in roots:
        for p in sorted(root.glob("*/*.json")):
            label, scale = p.parent.name, p.stem
            if label.startswith("_") or (label, scale) in seen or (label == "local") != _committed:
                continue
            try:
                rec = json.loads(p.read_text())
            except (OSError, ValueError):
                continue
            if not isinstance(rec, dict) or "series" not in rec:
                continue
            seen.add((label, scale))
            out.append(
                {
                    "hardware_label": label,
                    "scale": scale,
                    "calibrated": True,
                    "runs": sum(1 for r in rec.get("runs", []) if r.get("used") != "not used"),
                    "created_at": rec.get("created_at"),
                    "path": str(p),
                    "median_mds": {s: (k.get("timed") or {}).get("median_mds") for s, k in (rec.get("summary") or {}).items()},
                    "median_mds_engine_3": {
                        s: (k.get("timed") or {}).get("median_mds_family_3") for s, k in (rec.get("summary") or {}).items()
                    },
                    "median_mds_findings": {s: (k.get("findings") or {}).get("median_mds") for s, k in (rec.get("summary") or {}).items()},
                }
            )
    for label in labels:
        if not any(o["hardware_label"] == label for o in out):
            out.append({"hardware_label": label, "scale": None, "calibrated": False, "runs": 0, "created_at": None, "path": None})
    return out
