"""What a night was measured under, so that a history never mixes two: its input, its design, and why a series restarts.

Two inputs never share a drift history, nor two designs: the engine starts a figure rests on and the reads' order
(:data:`jsonbench.cell.DESIGN_PARAMS`), the server's settings and its processes' ASLR (:func:`design_of`).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from jsonbench.cell import DESIGN_PARAMS, design_params_of
from jsonbench.dataset.measurement import INPUT_FINGERPRINT


def input_of(scale_params: Any) -> str | None:
    """The input a row measured (``scale_params[INPUT_FINGERPRINT]``, the documents' sha256), or None for a suite without one."""
    if not isinstance(scale_params, str) or INPUT_FINGERPRINT not in scale_params:
        return None
    try:
        value = json.loads(scale_params).get(INPUT_FINGERPRINT)
    except (ValueError, AttributeError):
        return None
    return str(value) if value else None


#: Server settings that say where a server listens or how long a statement may run, not what it measures: left out of
#: a row's design (:func:`design_of`). ``statement_timeout`` is a guard (the matrix's ``statement_timeout_s``).
NOT_DESIGN = frozenset({"unix_socket_directories", "port", "listen_addresses", "statement_timeout"})


def design_of(settings: Any, engine_facts: Any) -> str:
    """The server design a row was measured under, as one comparable string: its settings (the server's own, as the row
    records them; less :data:`NOT_DESIGN`) and its processes' address space randomisation (``engine_facts.aslr``).

    The recorded arms of huge pages and ASLR showed why a history must not mix them: huge pages ran json_vs_jsonb 20-26 % slower on two pairs
    in three, and ASLR on doubled the spread between engine starts. A run under other settings is another design, as
    a run on other data is another input. Unreadable or absent values give an empty part (rows written before the
    column, or an engine that records none, share one design).
    """
    try:
        s = json.loads(settings) if isinstance(settings, str) and settings else {}
    except ValueError:
        s = {}
    try:
        facts = json.loads(engine_facts) if isinstance(engine_facts, str) and engine_facts else {}
    except ValueError:
        facts = {}
    kept = {k: v for k, v in (s.items() if isinstance(s, dict) else ()) if k not in NOT_DESIGN}
    aslr = facts.get("aslr") if isinstance(facts, dict) else None
    return json.dumps({"settings": kept, "aslr": aslr}, sort_keys=True, default=str)


def designs_of(df: pd.DataFrame) -> pd.Series:
    """:func:`design_of` of every row (computed once per distinct pair: engine facts are long and repeat)."""
    cache: dict[tuple[Any, Any], str] = {}
    out: list[str] = []
    for pair in zip(df["settings"], df["engine_facts"], strict=True):
        design = cache.get(pair)
        if design is None:
            design = cache[pair] = design_of(*pair)
        out.append(design)
    return pd.Series(out, index=df.index, dtype=object)


def same_input(hist: pd.DataFrame, now: pd.DataFrame) -> pd.DataFrame:
    """The history rows of tonight's design and inputs: two inputs never share a drift history, nor two designs.

    A suite that reads no input (no fingerprint in its scale parameters tonight) keeps its whole history. Nor do
    two designs of a night share one: figures that rest on several engine starts (the run parameter ``starts``) are a
    statistic of another spread and level than one start's, so each is judged against its own kind only, as are reads
    taken in another order (json_vs_jsonb's ``read_order``: :data:`jsonbench.cell.DESIGN_PARAMS`); and an engine's
    rows measured under other server settings or another ASLR (:func:`design_of`) are not its history tonight (a run
    with ``server_settings``, or an older default, builds a history of its own).
    """
    if "scale_params" not in now.columns or "scale_params" not in hist.columns or now.empty:
        return hist
    designs = {design_params_of(sp) for sp in now["scale_params"].unique()}
    hist = hist[hist["scale_params"].map(design_params_of).isin(designs)]
    if not hist.empty and {"settings", "engine_facts", "engine_id"} <= set(now.columns) & set(hist.columns):
        tonight_designs = set(zip(now["engine_id"], designs_of(now), strict=True))
        hist = hist[[pair in tonight_designs for pair in zip(hist["engine_id"], designs_of(hist), strict=True)]]
    tonight = {input_of(sp) for sp in now["scale_params"].unique()} - {None}
    if not tonight:
        return hist
    return hist[hist["scale_params"].map(input_of).isin(tonight)]


#: How a drift note starts that says why a series' history restarted (the report gathers these notes).
RESTART_NOTE = "its history restarts"


def design_restarts(every: pd.DataFrame, kept: pd.DataFrame, now: pd.DataFrame) -> dict[str, str]:
    """Per engine of tonight whose earlier runs :func:`same_input` set aside, why: how many runs, and what differs between
    the latest of them and tonight (server settings, ASLR, engine starts, read order, input). A series that has too few
    runs of tonight's design says so in its note, instead of only "not enough history" after a change of settings.
    """
    if every.empty or now.empty or "engine_id" not in every.columns:
        return {}
    out: dict[str, str] = {}
    for engine, mine in every.groupby("engine_id"):
        tonight = now[now["engine_id"] == engine]
        if tonight.empty:
            continue
        kept_runs = set(kept.loc[kept["engine_id"] == engine, "run_id"]) if not kept.empty else set()
        other = mine[~mine["run_id"].isin(kept_runs)]
        if other.empty:
            continue
        last = other.sort_values("logical_date").iloc[-1]
        changes = design_changes(last, tonight.iloc[0])
        what = ", ".join(changes[:4]) + (f" and {len(changes) - 4} more" if len(changes) > 4 else "") or "another design"
        n = int(other["run_id"].nunique())
        out[str(engine)] = f"{RESTART_NOTE}: {n} earlier run(s) of {engine} were measured otherwise ({what}), and are not its history"
    return out


def design_changes(before: Any, now: Any) -> list[str]:
    """What differs between two rows' designs, as short phrases (``aslr on -> off``, ``read_order sequential -> interleaved``)."""

    def parsed(text: Any) -> dict[str, Any]:
        try:
            d = json.loads(text) if isinstance(text, str) and text else {}
        except ValueError:
            return {}
        return d if isinstance(d, dict) else {}

    out: list[str] = []
    b_params, n_params = design_params_of(before.get("scale_params")), design_params_of(now.get("scale_params"))
    for name, b, n in zip(DESIGN_PARAMS, b_params, n_params, strict=True):
        if b != n:
            out.append(f"{name} {b} -> {n}")
    if input_of(before.get("scale_params")) != input_of(now.get("scale_params")):
        out.append("the input documents")
    b_design, n_design = (
        parsed(design_of(before.get("settings"), before.get("engine_facts"))),
        parsed(design_of(now.get("settings"), now.get("engine_facts"))),
    )
    if b_design.get("aslr") != n_design.get("aslr"):
        out.append(f"aslr {b_design.get('aslr') or 'unsaid'} -> {n_design.get('aslr') or 'unsaid'}")
    bs, ns = b_design.get("settings") or {}, n_design.get("settings") or {}
    for k in sorted(set(bs) | set(ns)):
        if bs.get(k) != ns.get(k):
            out.append(f"{k} {bs.get(k, 'unset')} -> {ns.get(k, 'unset')}")
    return out
