"""A run's outcome as plain text: its headline metrics per suite and engine, its checks' judgement, where its files are.

``jsonbench summary`` prints it for a published run (the latest by default) and ``jsonbench run`` after its run.
"""

from __future__ import annotations

from pathlib import Path

from jsonbench import paths


def summary(results_dir: str | None = None, run_id: str | None = None) -> str:
    """A plain-text table of a run's headline metrics per engine (the latest run by default)."""
    from jsonbench.dataset.publish import read_dataset
    from jsonbench.suites import get_suite

    root = paths.results_dir(results_dir)
    table = read_dataset(root)
    if table.num_rows == 0:
        return f"no published results under {root}"
    df = table.to_pandas()
    if run_id is None:
        run_id = df.sort_values("ended_at")["run_id"].iloc[-1]
    df = df[df["run_id"] == run_id]
    if df.empty:
        return f"run {run_id!r} has no published rows under {root}"
    lines = [f"run {run_id}: {len(df)} rows, hardware {df['hardware_label'].iloc[0]}, scale {df['scale'].iloc[0]}"]
    from jsonbench.dataset.measurement import HOST_SUITE

    for suite_name, sdf in df.groupby("suite"):
        if suite_name == HOST_SUITE:
            lines.append("\nhost (canary, ms, median of each component's samples, before each cell)")
            lines.append(
                sdf.pivot_table(index=["variant", "engine_id"], columns="metric", values="value", aggfunc="first").to_string(
                    float_format=lambda v: f"{v:,.1f}"
                )
            )
            continue
        headline = get_suite(str(suite_name)).headline
        sdf = sdf[sdf["metric"].isin(headline)] if headline else sdf
        pivot = sdf.pivot_table(index=["workload", "variant", "metric", "unit"], columns="engine_version", values="value", aggfunc="first")
        lines.append(f"\n{suite_name}")
        lines.append(pivot.to_string(float_format=lambda v: f"{v:,.2f}"))
    from jsonbench.suites.documents.summary import answers, render

    found = answers(df.to_dict("records"))
    if found:  # the documents suites' answer in sentences, from the same published rows as the tables above
        lines.append(render(found))
    na = df[df["status"] == "not_applicable"]
    if not na.empty:
        lines.append(f"\n{len(na)} metrics not applicable on some builds, e.g. {na['metric'].iloc[0]}: {na['reason'].iloc[0]}")
    lines.append(_checks_line(root, run_id))
    parts = sorted({str(p) for p in (root / "measurements").glob("hardware_label=*/run_date=*/run_key=*")})
    lines.append(
        f"\nParquet dataset: {root / 'measurements'} ({len(parts)} runs); this run: {[p for p in parts if p.endswith(_key(run_id))]}"
    )
    return "\n".join(lines)


def _checks_line(root: Path, run_id: str) -> str:
    """The run's judgement in one line: passed, failed, suspect or NOT JUDGED, the judged share and the confirmations."""
    from jsonbench.checks.outcome import check_outcome
    from jsonbench.checks.verdicts import describe_share

    out = check_outcome(root, run_id)
    if not out["rows"]:
        return "\nchecks: not checked"
    verdicts = out["verdicts"]
    confirmed = ", ".join(f"{v} {verdicts[v]}" for v in ("confirmed", "cleared", "unconfirmed", "suspect") if verdicts.get(v))
    return (
        f"\nchecks: {out['judgement'].upper().replace('_', ' ')}; {len(out['failed'])} of {out['rows']} failed"
        + (f" (timing measured twice: {confirmed})" if confirmed else "")
        + f"; {describe_share(out['judged'])}"
    )


def _key(run_id: str) -> str:
    from jsonbench.dataset.schema import run_key

    return run_key(run_id)
