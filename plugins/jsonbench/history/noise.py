"""The noise model: how much honest runs of one hardware label, scale and engine build move, per series and per finding.

This module holds what a night's drift check reads of the calibration record: where it lives, which of its entries
serve a series, and the one statistic a run contributes to a series. The arithmetic of thresholds, tails and minimum
detectable shifts is :mod:`jsonbench.history.stats`'s (plain numbers). The record is built by a maintainers' tool,
:mod:`jsonbench_dev.record` (``jsonbench-dev calibrate --record``), from recorded honest runs.

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
  one night against ``REF_RUNS`` earlier runs, and never below ``MIN_EFFECT``
  (:func:`jsonbench.history.stats.thresholds`);
* ``mds``: the minimum detectable shift: the change caught with probability ``POWER`` under the
  same conditions; ``mds_3`` the same for a shift that has lasted three nights (drift tests the
  mean of the last 1, 2 and 3 runs).

Each timing finding (``<suite>.reproduction.json``, kind ``timing``) per engine gets the run-to-run
spread of the log of its observed ratio, shrunk to the suite's median the same way, and its
``mds`` (a lone test among the run's timing findings). The summary gives the median ``mds`` per
suite.

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
from jsonbench.suites import get_suite

FORMAT = 1
#: The record's field of a family's spread *against its suite's other engines the same night* (its move less the
#: host's, :func:`jsonbench.history.stats.host_move`), over the runs where that move was seen
#: (:func:`~jsonbench.history.stats.host_seen`). A version's own change sets it apart from the versions measured beside
#: it; what every engine shares that night (an hour of the host that the canary does not feel) cancels in it.
CONTRAST = "contrast_sigma"


#: Weight (in degrees of freedom) of the suite's prior against a series' own run-to-run spread.
PRIOR_DF = 4
#: No series is modelled as quieter than this (log units, about 2 %): runs made one after another cannot see what moves
#: between nights (the page cache, the kernel, the room's temperature), and 2 % is the median run-to-run spread of the
#: quietest suite over the recorded smoke runs (sqlite_jsonb).
SIGMA_FLOOR = 0.02
#: The floor of a sampled series (a count or a volume: WAL bytes, HOT counts): its own spread decides, down to
#: 0.1 %. Seed 004's WAL bytes move 0.002 % between runs; a 2 % floor let a planted +3 % pass.
SAMPLED_FLOOR = 0.001
#: No family (an engine's suite) is modelled as moving less than this as a whole between runs: the recorded smoke
#: runs moved whole families by up to 5.5 % (catalogue) and 9 % (large_document_update) between honest runs.
FAMILY_FLOOR = 0.025
#: Units whose values are durations (smaller is better) or rates (larger is better), said once in hostspeed; drift takes
#: their best repetition.
#: Fallback for rows without a metric kind (rows published before the kinds existed): these units are timed.
TIMED_UNITS = RATE_UNITS | DURATION_UNITS | {"x"}


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


def build_family(build: Any) -> str:
    """An engine build without its interpreter's patch release: what a record entry's noise holds for.

    The same apsw and SQLite built for Python 3.11.2 on one host and 3.11.7 on another (the SQLite adapter names the
    Python in its build) is one build for its noise; another package, image or Python minor release is not, nor are the
    tests' synthetic builds. An entry that served only its very build left this machine type's hosts of Python 3.11.2
    without any calibrated SQLite series.
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


def kind_of(suite: str, workload: str, metric: str, unit: str, declared: Any = None, deterministic: bool | None = None) -> str:
    """The metric's kind: the row's ``metric_kind``, else the suite's declaration, else a fallback by unit.

    The fallback serves rows published before the kinds existed and suites that do not declare them
    yet: ``deterministic`` when the drift policy says so, ``timed`` for duration, rate and speed-up
    units, ``sampled`` for everything else that varies.
    """
    if isinstance(declared, str) and declared in ("deterministic", "sampled", "timed"):
        return declared
    try:
        k = get_suite(suite).metric_kind(workload, metric)
        if k in ("deterministic", "sampled", "timed"):
            return str(k)
    except Exception:  # an unknown suite, or one without declared kinds: the fallback below
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


def start_logs(unit: str, samples: Any, extra: Any) -> list[float]:
    """The log of each engine start's best repetition of a timing (:func:`start_groups`); empty for a figure of one
    start, a unit without a best, or a best that is not positive."""
    way = max if unit in RATE_UNITS else (min if unit in DURATION_UNITS else None)
    bests = _start_bests(samples, extra, way) if way is not None else None
    return [math.log(b) for b in bests] if bests else []


def _start_bests(samples: Any, extra: Any, way: Any) -> list[float] | None:
    """Each start's best repetition (:func:`start_groups`); None for a figure of one start, or where any best is not
    positive (no log to average)."""
    groups = start_groups(samples, extra)
    if groups is None or any(not g or way(g) <= 0 for g in groups):
        return None
    return [way(g) for g in groups]


def host_of(r: Any) -> str:
    """The host a row was measured on: the ``host`` a record's reader set (the kernel's ``boot_id``, or the manifest's name for
    rows from before the column), else the row's ``host_boot_id``, else "" (one unknown host); a row measured under a CPU quota
    (``host_cpu_quota``) is a host of its own, ``<boot_id>+quota<cores>``.

    A quota does more to a night than the canary can take out: on a recorded host under ``./bin/cpu-quota 0.6`` the
    catalogue's p99 latency of four clients on 1.2 cores rose 3.8x while ``cpu_all`` moved 1.45x: queueing
    is not linear in the CPU's speed. Such a night is judged with the between-hosts level too
    (:func:`jsonbench.history.stats.host_mix`), as a night on another machine is: it is not this host's history.
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
