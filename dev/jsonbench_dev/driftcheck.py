"""``jsonbench-dev drift-recheck``: drift judged on every recorded host it never saw, honest and planted.

What drift must do, on real runs: quiet on an honest night of a host, caught when a version or the harness
moved. For each host of ``recorded/`` (plus ``--results-dir`` folders) with two or more runs at a scale, the noise
record is built from the **other** hosts' runs only (leave one host out: the host is new to it, as every user's
machine is), and then:

* **honest**: each of the host's runs judged against its earlier runs, nothing planted; every drift verdict is a false
  alarm before confirmation (``drift``), counted per run with the families it fell in;
* **one version slower** (``--factor``, 1.25 by default): every timing of one engine of ``--nights`` runs of the
  machine as it is (a night under a CPU quota is a host of its own: no plant lands on it), the latest stretch in which
  other engines ran beside it (:func:`version_window`; else its last runs, and the table says so), slowed, judged night
  by night against the runs before the plant; the share of its judged series caught within those nights, and of the
  series whose noise allows it (the series' own mds at the family's test level, over those nights and the reference
  drift had: where the family is judged beside the other versions, the runs they shared; at most the planted change;
  and, the weaker claim, of those whose family's mds allows it);
* **the harness slower**: every engine slowed at once, the canary untouched, in the latest run where three engines or
  more have history on this host (with fewer, every engine that moved is also what its own version change would look
  like): caught the first night, and said as a harness or setting change;
* **a count 3 % higher**: every near-exact count of the last run (a sampled series, WAL bytes or HOT counts, whose
  record sigma is at most 0.25 %) times 1.03: caught the first night.

The committed record is not read: each host's record is built here, from the others. ``--starts N`` judges the
nights whose figures rest on N engine starts (the run parameter ``starts``; 2 at laptop and full)
against a record of the other machines' one-start runs, as a user's night of that design is judged until a record of
its own exists (a night's rows of one start, SQLite's at the default, are judged with ``--starts 1``). Prints a table
per host and scale; exit 1 when an honest run raised more than ``--max-honest`` alarms.
"""

from __future__ import annotations

import argparse
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonbench.cli import UsageError
from jsonbench.history.stats import HOST_MIN_FAMILIES


@dataclass
class HostDrift:
    """One host's honest and planted outcome at one scale."""

    host: str
    scale: str
    runs: list[str]
    honest: list[dict[str, Any]] = field(default_factory=list)
    version: dict[str, Any] = field(default_factory=dict)
    harness: dict[str, Any] = field(default_factory=dict)
    count: dict[str, Any] = field(default_factory=dict)
    record_hosts: list[str] = field(default_factory=list)
    #: its runs under a CPU quota (judged honest; no plant lands on them)
    quota: list[str] = field(default_factory=list)


def _revision_of(df: Any) -> str:
    """A run's harness revision, short (``""`` when its rows recorded none)."""
    from jsonbench.history.drift import known_revision, short_revision

    revs = [k for v in df["git_revision"].unique() if (k := known_revision(v))] if "git_revision" in df else []
    return short_revision(revs[0]) if revs else ""


def _under_quota(df: Any) -> bool:
    """Whether a run's rows were measured under a CPU quota (``./bin/cpu-quota``: every row records ``host_cpu_quota``)."""
    return "host_cpu_quota" in df and bool(df["host_cpu_quota"].notna().any())


def _run_ref(df: Any, run_id: str) -> dict[str, Any]:
    import pandas as pd

    r = df[df["run_id"] == run_id]
    return {
        "run_id": run_id,
        "logical_date": pd.Timestamp(r["logical_date"].iloc[0]).isoformat(),
        "hardware_label": str(r["hardware_label"].iloc[0]),
        "scale": str(r["scale"].iloc[0]),
        "results_dir": "",
    }


def version_window(own: list[str], runs: list[str], engines_of: list[set[str]], n: int) -> tuple[list[str], str]:
    """The nights the version plant lasts: the latest ``n`` consecutive runs of the machine as it is (``own``) in which
    :data:`HOST_MIN_FAMILIES` engines or more were measured, each with a run before it; else its last ``n`` runs.

    Only beside other engines can drift tell one version's change from the host's (a night of one engine that moved is
    also a host that moved: ``noise.HOST_MIN_FAMILIES``), so a window of narrowed runs asks drift what it cannot know.
    Returns the window and how it was chosen (``"multi-engine"`` or ``"last runs"``, the latter when no such stretch
    exists)."""
    wide = [len(engines_of[runs.index(r)]) >= HOST_MIN_FAMILIES for r in own]
    for end in range(len(own), n, -1):  # the window own[end - n:end], latest first, with one own run before it at least
        if all(wide[end - n : end]):
            return own[end - n : end], "multi-engine"
    return own[-n:], "last runs"


def drift_recheck(
    folders: list[tuple[Path, dict[str, Any]]],
    scale: str,
    factor: float = 1.25,
    nights: int = 3,
    label: str = "local",
    only: set[str] | None = None,
    judge: set[str] | None = None,
    starts: int = 1,
) -> list[HostDrift]:
    """Every host with two or more runs at ``scale`` in ``folders`` (or those whose id starts with one of ``only``),
    judged by a record of the other hosts. With ``judge`` (folders), only the runs in those folders are a host's history
    and nights, as a user's results folder is: the record still comes from the other machines of every folder. The
    nights judged are those of ``starts`` engine starts; the record is built from one-start runs whatever ``starts``
    (:func:`jsonbench_dev.record.read_runs`), as drift reads the committed record for every design."""
    import pandas as pd

    from jsonbench.checks.library import load_library
    from jsonbench.history.cleared import read_as_history
    from jsonbench.history.stats import family_mds
    from jsonbench_dev import plants
    from jsonbench_dev.record import build_record, read_runs

    lib = load_library()
    every = read_runs(folders, label, scale, starts=starts)
    if every.empty:
        return []
    # the record's runs: one start's, whichever design is judged (a night of another design reads the same record)
    recordable = every if starts == 1 else read_runs(folders, label, scale)
    # earlier nights as a night's drift reads them (history.cleared: a value its confirmation cleared as re-measured);
    # tonight is judged as measured
    read_back = pd.concat(
        [read_as_history(f, g, hardware_label=label)[0] for f, g in every.groupby("folder", sort=False)], ignore_index=True
    )
    out: list[HostDrift] = []
    # Leave one machine out (a ``boot_id``, its runs under a CPU quota included: judged against its own full-speed runs, as a
    # quota night is, and never in the record that judges it).
    for host, data in sorted(every.groupby("machine"), key=lambda x: str(x[0])):
        # as a night reads its history: its rows carry the ``boot_id`` and the CPU quota, not the record's host label
        data = data.drop(columns=["host"])
        if judge is not None:
            data = data[data["folder"].isin(judge)]
        order = data.groupby("run_id")["logical_date"].min().sort_values()
        runs = [str(r) for r in order.index]
        if len(runs) < 2 or (only and not any(str(host).startswith(o) for o in only)):
            continue
        others = sorted(set(recordable.loc[recordable["machine"] != host, "run_id"].astype(str)))
        try:
            record = build_record(folders[0][0], scale, label, lib=lib, sources=folders, runs=others)
        except SystemExit:
            continue
        hd = HostDrift(str(host)[:8], scale, runs, record_hosts=sorted({str(r.get("host"))[:8] for r in record["runs"]}))
        by_run = {r: data[data["run_id"] == r] for r in runs}
        back = read_back[(read_back["machine"] == host) & read_back["folder"].isin(set(data["folder"]))].drop(columns=["host"])
        past = {r: back[back["run_id"] == r] for r in runs}
        for i in range(1, len(runs)):
            tonight = by_run[runs[i]]
            dataset = pd.concat([*(past[r] for r in runs[:i]), tonight], ignore_index=True)
            frame = plants.drift_all(tonight, dataset, _run_ref(data, runs[i]), lib, record)
            a = plants.alarms(frame)
            hd.honest.append(
                {
                    "run_id": runs[i],
                    "history": i,
                    # the harness's revision against the run before it's (drift's notes say it per series)
                    "revision": _revision_of(by_run[runs[i]]),
                    "revision_before": _revision_of(by_run[runs[i - 1]]),
                    "judged": len(plants.judged(frame)),
                    "alarms": len(a),
                    "families": sorted({f"{k[0]}/{k[1]}" for k in a}),
                }
            )
        # One version slower over the last nights of the machine as it is (history: every run before them). A night under a
        # CPU quota is a slower machine for a while, a host of its own (noise.host_of), not one of its nights: the plants
        # leave it out (judged honest above, and kept in the history of what follows it).
        hd.quota = [r for r in runs if _under_quota(by_run[r])]
        own = [r for r in runs if r not in hd.quota]
        n = max(1, min(nights, len(own) - 1))
        # each run's engines (the canary's rows aside)
        engines_of = [{str(e) for e in by_run[r].loc[plants.benchmarked(by_run[r]), "engine_id"].unique()} for r in runs]
        window, how = version_window(own, runs, engines_of, n)
        start = runs.index(window[0])
        in_window = [engines_of[runs.index(r)] for r in window]
        # the engine of most of those nights, and of those the one with the longest history before them
        planted_engine = max(
            sorted(set().union(*engines_of)),
            key=lambda e: (sum(e in s for s in in_window), sum(e in s for s in engines_of[:start])),
        )
        caught: set[tuple[str, ...]] = set()
        judged: set[tuple[str, ...]] = set()
        planted: set[tuple[str, ...]] = set()
        first_night: set[tuple[str, ...]] = set()
        planted_runs: dict[str, Any] = {}
        reference: dict[tuple[str, ...], int] = {}
        family_reference: dict[tuple[str, ...], int] = {}
        for k, rid in enumerate(window):
            df = by_run[rid].copy()
            moved = plants.slow(df, plants.engine_rows(df, planted_engine), factor)
            planted |= plants.keys_of(df, moved)
            planted_runs[rid] = df
            dataset = pd.concat([*(past[r] for r in runs[:start]), *planted_runs.values()], ignore_index=True)
            frame = plants.drift_all(df, dataset, _run_ref(data, rid), lib, record)
            got = plants.alarms(frame) & planted
            caught |= got
            if k == 0:
                first_night = got
                # what each series' window test had before the plant: its design's quiet runs since its last change point
                reference = plants.reference_runs(frame)
                # and what its family's way had: beside the other versions, only the runs where they ran beside it
                family_reference = plants.family_reference_runs(frame)
            judged |= plants.judged(frame) & planted
        # Which series' noise allows a 1.25x version change to be seen within these nights (plants.noise_allows): a series
        # of a selected family is tested on its own at the family's level (q * R / F), so its noise allows it when its
        # family's and its own mds over these nights and the reference drift had are at most the planted change; any
        # other series is a lone one (BH over the run's series). The reference is the series' own (its design's quiet
        # runs since its last change point, the first planted night), not every earlier run of the host.
        # (``allowed_family`` counts the series whose family's mds allows it, the weaker claim; ``allowed_series`` those
        # whose own mds at the family's level does, their family's noise aside: a weaker claim.)
        fams = record.get("families") or {}
        ser = record.get("series") or {}
        refs = {key: reference.get(key, start) for key in judged}
        # the series' own mds at the family's level, whatever its family's noise (a weaker claim)
        allowed_series = {
            key
            for key in judged
            if family_mds(float((ser.get("/".join(key)) or {}).get("sigma") or 99), ref_runs=refs[key], nights=n) <= factor - 1
        }
        allowed = {key for key in judged if plants.noise_allows(record, key, refs[key], n, factor, family_reference.get(key))}
        allowed_family = {
            key
            for key in judged
            if family_mds(float((fams.get(f"{key[0]}/{key[1]}") or {}).get("sigma") or 99), ref_runs=refs[key], nights=n) <= factor - 1
        }
        ref_sorted = sorted(refs.values())
        hd.version = {
            "engine": planted_engine,
            "nights": n,
            "window": how,
            "window_runs": list(window),
            "history": start,
            "judged": len(judged),
            "caught_first_night": len(first_night & judged),
            "caught": len(caught & judged),
            "allowed": len(allowed),
            "caught_allowed": len(caught & allowed),
            "allowed_series": len(allowed_series),
            "caught_allowed_series": len(caught & allowed_series),
            "allowed_family": len(allowed_family),
            "caught_allowed_family": len(caught & allowed_family),
            # the reference each judged series' window test had (runs), against the host's earlier runs (``history``)
            "reference_median": ref_sorted[len(ref_sorted) // 2] if ref_sorted else 0,
            "reference_min": ref_sorted[0] if ref_sorted else 0,
            "reference_short": sum(v < start for v in ref_sorted),
            # the reference of the family's way (runs beside the other versions, where drift judged it beside them)
            "family_reference_median": statistics.median(fr) if (fr := [family_reference.get(k, refs[k]) for k in judged]) else 0,
            # the allowed series drift missed, with the reference each had (what to look at when the share is low)
            "missed_allowed": sorted(f"{'/'.join(k[2:])} (reference {refs[k]})" for k in allowed - caught)[:12],
        }
        # The harness: every engine of the latest run slower, the canary as measured. Only a run in which three engines or
        # more have history on this host can tell a harness change from one version's: with fewer, every engine that
        # moved is also what a version change of it would look like (noise.HOST_MIN_FAMILIES).
        wide = [
            r for i, r in enumerate(runs) if i >= 1 and r in own and len(engines_of[i] & set().union(*engines_of[:i])) >= HOST_MIN_FAMILIES
        ]
        if not wide:
            out.append(hd)
            continue
        rid = wide[-1]
        df = by_run[rid].copy()
        moved = plants.slow(df, plants.benchmarked(df), factor)
        keys = plants.keys_of(df, moved)
        dataset = pd.concat([*(past[r] for r in runs[: runs.index(rid)]), df], ignore_index=True)
        frame = plants.drift_all(df, dataset, _run_ref(data, rid), lib, record)
        hit = plants.alarms(frame) & keys
        judged_h = plants.judged(frame) & keys
        notes = frame[(frame["verdict"] == "drift")]["note"].astype(str) if not frame.empty else pd.Series([], dtype=str)
        hd.harness = {
            "run_id": rid,
            "judged": len(judged_h),
            "caught": len(hit),
            "families": len({(k[0], k[1]) for k in hit}),
            "said_as_harness": int(notes.str.contains("a harness or setting change").sum()),
        }
        hd.count = _count_plant(by_run, past, runs, record, lib, data)
        out.append(hd)
    return out


#: A near-exact count: a sampled series (WAL bytes, HOT counts) whose honest runs move it at most this much (log): a
#: +3 % change is then 12 of its sigmas.
NEAR_EXACT = 0.0025
#: The planted change of a near-exact count (the target: +3 %, caught the first night).
COUNT_FACTOR = 1.03


def _count_plant(
    by_run: dict[str, Any], past: dict[str, Any], runs: list[str], record: dict[str, Any], lib: Any, data: Any
) -> dict[str, Any]:
    """Every near-exact count of the latest run 3 % higher: how many the drift check catches that night."""
    import pandas as pd

    from jsonbench.dataset.measurement import is_polled_peak
    from jsonbench_dev import plants

    rid = runs[-1]
    df = by_run[rid].copy()
    # A polled peak is no count: a read is a lower bound, judged only beyond the plan's margin (history.drift).
    near = {
        k
        for k, e in (record.get("series") or {}).items()
        if e.get("kind") == "sampled" and float(e.get("sigma") or 1) <= NEAR_EXACT and not is_polled_peak(k.split("/")[2], k.split("/")[4])
    }
    keys = ["/".join(map(str, k)) for k in zip(df["suite"], df["engine_id"], df["workload"], df["variant"], df["metric"], strict=True)]
    mask = pd.Series([k in near for k in keys], index=df.index) & (df["status"] == "ok")
    if not mask.any():
        return {}
    plants.scale_rows(df, mask, COUNT_FACTOR)
    planted = plants.keys_of(df, mask)
    dataset = pd.concat([*(past[r] for r in runs[:-1]), df], ignore_index=True)
    frame = plants.drift_all(df, dataset, _run_ref(data, rid), lib, record)
    judged = plants.judged(frame) & planted
    return {"run_id": rid, "planted": len(planted), "judged": len(judged), "caught": len(plants.alarms(frame) & judged)}


def _pct(a: int, b: int) -> str:
    return "-" if not b else f"{a / b:.0%}"


def render(results: list[HostDrift], factor: float) -> str:
    """Per host: the record's hosts, each honest night's alarms, and the planted outcomes."""
    lines = []
    for h in results:
        lines.append(f"host {h.host} @ {h.scale}: {len(h.runs)} runs; record from {', '.join(h.record_hosts)}")
        for r in h.honest:
            fams = f" ({', '.join(r['families'][:6])}{', ...' if len(r['families']) > 6 else ''})" if r["families"] else ""
            rev = r.get("revision") or ""
            before = r.get("revision_before") or ""
            harness = f" [harness {before} -> {rev}]" if rev and before and rev != before else ""
            lines.append(
                f"  honest {r['run_id']} against {r['history']} earlier{harness}: {r['alarms']} alarm(s) of {r['judged']} judged{fams}"
            )
        v = h.version
        if v:
            lines.append(
                f"  {v['engine']} {factor:g}x slower for {v['nights']} night(s) after {v['history']} ({v.get('window', 'last runs')}): caught "
                f"{v['caught_first_night']} of {v['judged']} the first night, {v['caught']} ({_pct(v['caught'], v['judged'])}) within; "
                f"of the {v['allowed']} whose own noise allows it: {_pct(v['caught_allowed'], v['allowed'])} "
                f"(of the {v['allowed_family']} whose family's noise allows it: {_pct(v['caught_allowed_family'], v['allowed_family'])}; "
                f"of the {v.get('allowed_series', 0)} whose own noise would at the family's level, their family's aside: "
                f"{_pct(v.get('caught_allowed_series', 0), v.get('allowed_series', 0))})"
            )
            if v.get("reference_short"):
                lines.append(
                    f"    each series' reference: median {v['reference_median']} run(s), at least {v['reference_min']}; "
                    f"{v['reference_short']} of {v['judged']} had fewer than the {v['history']} earlier runs "
                    "(another design, a busy window, or before a change point); "
                    f"its family's way (beside the other versions): median {v.get('family_reference_median', 0):g} run(s)"
                )
            if v.get("missed_allowed"):
                lines.append(f"    missed, though its noise allows it: {'; '.join(v['missed_allowed'])}")
        m = h.harness
        if m:
            lines.append(
                f"  every engine {factor:g}x slower in {m['run_id']}, the canary as measured: caught {m['caught']} of {m['judged']} "
                f"({_pct(m['caught'], m['judged'])}) in {m['families']} families the first night; said as a harness change: {m['said_as_harness']}"
            )
        else:
            lines.append(
                f"  every engine {factor:g}x slower: not tried, no run here has {HOST_MIN_FAMILIES} engines with history on this host "
                "(with fewer, a harness change looks like each engine's own version change)"
            )
        c = h.count
        if c:
            lines.append(
                f"  every near-exact count (sampled, sigma <= {NEAR_EXACT:.2%}) {COUNT_FACTOR - 1:+.0%} in {c['run_id']}: caught "
                f"{c['caught']} of {c['judged']} judged ({_pct(c['caught'], c['judged'])}) the first night; {c['planted']} planted"
            )
    return "\n".join(lines) if lines else "no host with two or more runs at this scale"


def main(args: argparse.Namespace) -> int:
    """The command; exit 1 when an honest run raised more alarms than ``--max-honest``."""
    if not math.isfinite(args.factor) or args.factor <= 1:
        raise UsageError("--factor must be a number above 1")
    if args.starts < 1:
        raise UsageError("--starts must be 1 or more")
    from jsonbench_dev.recheck import folders_to_check

    judge = {str(Path(d)) for d in args.results_dir} if args.judge_only else None
    if args.judge_only and not args.results_dir:
        raise UsageError("--judge-only needs at least one --results-dir")
    results = drift_recheck(
        folders_to_check(args.results_dir),
        args.scale,
        args.factor,
        args.nights,
        only=set(args.host) or None,
        judge=judge,
        starts=args.starts,
    )
    print(render(results, args.factor))
    worst = max((r["alarms"] for h in results for r in h.honest), default=0)
    return 1 if worst > args.max_honest else 0
