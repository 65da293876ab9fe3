"""The noise model: how much honest runs of one hardware label, scale and engine build move, per series and per finding.

This module holds what a night's drift check reads: the statistics of a threshold and the calibration record
as a file. The record is built by a maintainers' tool, :mod:`jsonbench_dev.record` (``jsonbench-dev calibrate
--record``), from recorded honest runs.

A drift threshold of one size for every timing (``min_magnitude`` 0.5, a 1.5x change) is blind to a
1.25x regression of a series that moves 2 % between runs, and too eager for one that moves 30 %.
This module measures the noise instead, from recorded honest runs, and stores it as a
**calibration record** that names its runs, so that every threshold can be derived again from data
that exists:

* label ``local`` (this project's machine type): ``include/calibration/local/<scale>.json``,
  committed; any other label: ``<results>/calibration/<label>/<scale>.json``.
* ``jsonbench-dev calibrate --scale S --results-dir D --record`` writes it (``--exclude
  RUN[::SUITE,...]`` leaves a known disturbed run, or some of its suites, out, with ``--why``);
  ``jsonbench-dev campaign`` runs N honest reruns and then does the same.

What one series holds (a series is suite, engine id, workload, variant and metric of a ``timed`` or
``sampled`` metric, over every build of the engine id it ran on (``engine_builds``), its starts compared
inside one host and one build; deterministic ones have no noise to model):

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
import re
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.history.hostspeed import DURATION_UNITS, RATE_UNITS

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


def host_seen(moves: dict[tuple[str, str], float]) -> set[str]:
    """The suites whose :func:`host_move` was read from engines measured beside them (not the 0 of too few families):
    where a family can be judged against the others, its contrast (:data:`CONTRAST` in the record's families)."""
    every = len(moves) >= HOST_MIN_FAMILIES
    return {s for s in {sx for sx, _ in moves} if every or sum(1 for sx, _ in moves if sx == s) >= HOST_MIN_FAMILIES}


#: The record's field of a family's spread *against its suite's other engines the same night* (its move less the host's,
#: :func:`host_move`), over the runs where that move was seen (:func:`host_seen`). A version's own change sets it apart
#: from the versions measured beside it; what every engine shares that night (an hour of the host that the canary does
#: not feel) cancels in it.
CONTRAST = "contrast_sigma"


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


def canary_component(fits: dict[str, dict[str, Any]] | None, suite: str, workload: str, policy: str) -> tuple[str, float] | None:
    """(component, share of its move) of the canary taken out of ``suite/workload``'s timings whose ``drift.json``
    component is ``policy``: what the record's fit chose (``canary_fit``, :func:`jsonbench_dev.record.canary_fits`);
    None where no component explains them (judged as measured); ``(policy, 1.0)`` where the record has no fit."""
    fit = (fits or {}).get(f"{suite}/{workload}/{policy}")
    if not fit:
        return policy, 1.0
    if fit.get("use") is None:
        return None
    return str(fit["use"]), float(fit.get("coef") or 1.0)


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


def build_family(build: Any) -> str:
    """An engine build without its interpreter's patch release: what a record entry's noise holds for.

    The same apsw and SQLite built for Python 3.11.2 on one host and 3.11.7 on another (the SQLite adapter names the
    Python in its build) is one build for its noise; another package, image or Python minor release is not, nor are the
    tests' synthetic builds. Until sitting 65 an entry served only its very build, and this machine type's hosts of
    Python 3.11.2 had no calibrated SQLite series at all.
    """
    return re.sub(r"(Python \d+\.\d+)\.\d+", r"\1", str(build or ""))


def serves(entry: dict[str, Any], build: Any) -> bool:
    """Whether a record's entry (a series' or a family's) holds the noise of ``build``: one of the builds it was measured
    on (``engine_builds``, else ``engine_build``), up to the interpreter's patch release (:func:`build_family`)."""
    builds = entry.get("engine_builds") or [entry.get("engine_build")]
    return build_family(build) in {build_family(b) for b in builds}


def tail_of(tails: dict[str, Any] | None, suite: str, kind: str | None) -> dict[str, Any] | None:
    """The tail a lone series of ``suite`` and ``kind`` is judged under: its suite's of its kind (``<suite>:<kind>``),
    else every suite's of its kind (``*:<kind>``), else (a record from before tails per kind) its suite's, else every one's.

    A count's honest moves are not a timing's: a WAL volume moves 0.002 % between starts and a per-row timing 1.5-2x on
    some hosts. Under one tail per suite the timings' heavy tail decided a count's p-value, and a +3 % count went unseen.
    """
    t = tails or {}
    return t.get(f"{suite}:{kind}") or t.get(f"*:{kind}") or t.get(suite) or t.get("*")


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


def statistic(unit: str, value: Any, samples: Any, extra: Any = None) -> float | None:
    """The one number a run contributes to a series: the best repetition of a duration or rate, else the value.

    A figure that rests on several engine starts (``extra["start_samples"]``, the run parameter ``starts``) is the
    geometric mean of each start's best: the starts' noise, which dominates the PostgreSQL suites, then averages out
    (its variance over k starts is 1/k of one start's), where the best of all of them would keep most of it (0.68 of
    it at two starts) and sit lower than one start's best by about half a start's spread.
    """
    pts = [float(x) for x in samples if x is not None and math.isfinite(float(x))] if samples is not None and len(samples) else []
    way = max if unit in RATE_UNITS else (min if unit in DURATION_UNITS else None)
    if pts and way is not None:
        per_start = _start_bests(samples, extra, way)
        if per_start:
            return math.exp(statistics.fmean(math.log(b) for b in per_start))
        return way(pts)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def start_groups(samples: Any, extra: Any) -> list[list[float]] | None:
    """A figure's finite samples split by engine start, when ``extra`` (a dict, or a row's JSON text) says how many
    samples each start gave (``start_samples``) and they add up; None for a figure of one start."""
    if isinstance(extra, str):
        if "start_samples" not in extra:
            return None
        try:
            extra = json.loads(extra)
        except ValueError:
            return None
    sizes = extra.get("start_samples") if isinstance(extra, dict) else None
    if samples is None or not isinstance(sizes, list) or len(sizes) < 2 or sum(int(n) for n in sizes) != len(samples):
        return None
    groups, i = [], 0
    for n in sizes:
        groups.append([float(x) for x in list(samples)[i : i + int(n)] if x is not None and math.isfinite(float(x))])
        i += int(n)
    return groups


def _start_bests(samples: Any, extra: Any, way: Any) -> list[float] | None:
    """Each start's best repetition (:func:`start_groups`); None for a figure of one start, or where any best is not
    positive (no log to average)."""
    groups = start_groups(samples, extra)
    if groups is None or any(not g or way(g) <= 0 for g in groups):
        return None
    return [way(g) for g in groups]


def log_of(x: float | None) -> float | None:
    """Noise is modelled in log space (a 10 % slowdown is the same shift on a 1 ms and a 1 s series); non-positive values have none."""
    return math.log(x) if x is not None and x > 0 else None


def host_of(r: Any) -> str:
    """The host a row was measured on: the ``host`` a record's reader set (the boot id, or the manifest's name for rows
    from before the column), else the row's boot id, else "" (one unknown host); a row measured under a CPU quota
    (``host_cpu_quota``) is a host of its own, ``<boot id>+quota<cores>``.

    A quota does more to a night than the canary can take out: on ``ed7b53fa`` under ``./bin/cpu-quota 0.6`` the
    catalogue's p99 latency of four clients on 1.2 cores rose 3.8x while ``cpu_all`` moved 1.45x (sitting 40): queueing
    is not linear in the CPU's speed. Such a night is judged with the between-hosts level too
    (:func:`jsonbench.history.drift.host_mix`), as a night on another machine is: it is not this host's history.
    """
    host = getattr(r, "host", None)
    if isinstance(host, str) and host:
        return host
    boot = getattr(r, "host_boot_id", None)
    base = boot if isinstance(boot, str) and boot else ""
    quota = getattr(r, "host_cpu_quota", None)
    try:
        q = float(quota) if quota is not None else math.nan
    except (TypeError, ValueError):
        q = math.nan
    return base if math.isnan(q) else f"{base}+quota{q:g}"


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
