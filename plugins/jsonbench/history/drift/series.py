"""A calibrated series: a statistical series with an entry in the calibration record, as its window test reads it.

Its runs are the log of each quiet earlier run's statistic (:func:`jsonbench.history.noise.statistic`), oldest first,
and tonight's; its noise is the record's ``sigma`` learned on tonight's host from its own quiet nights
(:func:`host_noise`), and the record's ``host_sigma`` between hosts. Before the test, the level it is
compared with starts where Otava's last change point in its history says (``base``), leaves out the nights too far from
the others to teach its noise (:attr:`CalibratedSeries.far`), and the host's move beside each cell, read from the canary,
is taken out of each run (:func:`take_canary_out`).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from jsonbench.compare.inherit import ComparedBuild, inherited_builds
from jsonbench.history import hostspeed
from jsonbench.history.drift.policy import Settings
from jsonbench.history.drift.selection import not_judgeable, quiet_runs
from jsonbench.history.drift.wording import known_revision
from jsonbench.history.noise import SAMPLED_FLOOR, SIGMA_FLOOR, canary_component, host_of, serves, start_logs, statistic
from jsonbench.history.noise import series_key as record_key
from jsonbench.history.stats import OwnNoise, log_of, own_noise, reference, variance_ratio


@dataclass(frozen=True)
class CalibratedSeries:
    """One statistical series judged against its calibrated noise: its runs' log statistics (oldest first), tonight's,
    and the record's entry.

    ``runs``, ``hosts`` and ``revisions`` name each run of ``logs`` and then tonight's (the host: the kernel's ``boot_id``, or a host
    of its own under a CPU quota; the revision: the harness's ``git_revision``). ``base`` is where the series' current
    level starts in ``logs``. ``canary`` is the canary's move taken out of tonight's window, when it was taken out, and
    ``canary_note`` why it was not.
    """

    suite: str
    row: int
    engine_id: str
    engine_build: str
    unit: str
    entry: dict[str, Any]
    sigma: float
    logs: tuple[float, ...]
    tonight: float
    runs: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    revisions: tuple[str, ...] = ()
    host_sigma: float = 0.0
    base: int = 0
    canary: hostspeed.CanaryMove | None = None
    canary_note: str = ""
    own: OwnNoise | None = None

    @property
    def key(self) -> tuple[str, int]:
        """The series' identity in a run: its suite and its row in the suite's frame."""
        return (self.suite, self.row)

    @property
    def far(self) -> frozenset[int]:
        """The earlier runs (indices into ``logs``) its reference leaves out: tonight's host's nights of the current
        level (from ``base``) far from the others of it (:meth:`jsonbench.history.stats.OwnNoise.far`); without a change
        point, the nights its noise left out. They stay in its history, and in a window that holds them."""
        if self.own is None or not self.hosts:
            return frozenset()
        mine = [i for i, h in enumerate(self.hosts[:-1]) if h == self.hosts[-1]]
        if len(mine) != len(self.own.levels):
            raise ValueError(f"{len(self.own.levels)} nights of its own noise for {len(mine)} runs on its host")
        return frozenset(mine[j] for j in self.own.far(sum(1 for i in mine if i < self.base)))

    @property
    def reference_runs(self) -> list[int]:
        """The runs (indices into ``logs``) tonight is judged against: from ``base``, but those :attr:`far` from the others."""
        return reference(self.base, len(self.logs), self.far)

    @property
    def kind(self) -> Any:
        """The metric's kind the record holds its noise for (``timed`` or ``sampled``)."""
        return self.entry.get("kind")

    @property
    def way(self) -> int:
        """+1 when a larger value is slower (a duration), -1 when smaller is (a rate), 0 without a direction."""
        return hostspeed.direction(self.unit)

    @property
    def timed(self) -> bool:
        """A timing with a direction: what a family's move is read from."""
        return self.kind == "timed" and self.way != 0


def calibration_entry(record: dict[str, Any] | None, suite: str, r: Any, compared: Sequence[ComparedBuild] = ()) -> dict[str, Any] | None:
    """The record's entry of this series, when it holds the noise of tonight's build (:func:`jsonbench.history.noise.serves`).

    The record holds a series' noise on this hardware type; its level comes from tonight's own history, which is of
    tonight's build alone. An entry that served only its very build sent every SQLite series of a host whose Python
    differed from the record's hosts' (3.11.2 against 3.11.7: the same apsw and SQLite) to Otava and its 1.5x, and an
    honest 3x move of a scan alarmed (``docs/noise-levels.md``)."""
    if not record:
        return None
    e = (record.get("series") or {}).get(record_key(suite, r.engine_id, r.workload, r.variant, r.metric))
    if e and e.get("sigma") and serves(e, r.engine_build):
        return dict(e)
    return inherited_entry(record, suite, r, compared)


def inherited_entry(record: dict[str, Any], suite: str, r: Any, compared: Sequence[ComparedBuild]) -> dict[str, Any] | None:
    """The entry of the nearest build a published comparison found alike in this metric
    (:func:`jsonbench.compare.inherit.inherited_builds`), under that build's engine id, when the record serves it: a new
    build's noise is its compared build's, so its first nights are judged by it, not by Otava's coarse default."""
    if not compared:
        return None
    chain = inherited_builds(compared, str(r.engine_id), str(r.engine_build)).get((suite, str(r.workload), str(r.variant), str(r.metric)))
    for link in chain or []:
        e = (record.get("series") or {}).get(record_key(suite, link.engine_id, r.workload, r.variant, r.metric))
        if e and e.get("sigma") and serves(e, link.build):
            return {**e, "inherited_from": f"{link.engine_id} {link.build} ({link.verdict}, comparison {link.comparison_id})"}
    return None


def _log_statistic(x: Any) -> float | None:
    return log_of(statistic(x.unit, x.value, x.samples, getattr(x, "extra", None)))


def host_noise(pts: list[tuple[Any, float]], tonight: Any, prior: float, kind: Any) -> OwnNoise:
    """The series' nightly noise on tonight's host (:func:`jsonbench.history.stats.own_noise`): its quiet earlier nights
    measured where tonight was (``host_of``), their engine starts, shrunk towards the record's level inside one host.
    A night far from the others (:func:`jsonbench.history.stats.quiet_nights`) stays in the history but teaches nothing,
    nor is tonight judged against it (:attr:`CalibratedSeries.far`).

    The record's level is pooled over every host of the label, each judged against its own runs, and its quietest and
    noisiest hosts differ several fold: a laptop whose nights move 3 % was judged with a sigma of 10-30 % and a planted
    1.25x slower version went unseen. A host's own nights say what it does; the record speaks until they are enough.
    """
    here = host_of(tonight)
    mine = [(x, lv) for x, lv in pts if host_of(x) == here]
    starts = [start_logs(str(x.unit), x.samples, getattr(x, "extra", None)) for x, _ in mine]
    floor = SAMPLED_FLOOR if kind == "sampled" else SIGMA_FLOOR
    return own_noise([lv for _, lv in mine], starts, prior, floor)


def calibrated_series(
    row: dict[str, Any], idx: int, g: list[Any], r: Any, entry: dict[str, Any], s: Settings
) -> tuple[dict[str, Any], CalibratedSeries | None]:
    """The row's fields (its quiet history, the record's sigma) and the series, or None when it is not judged."""
    pts = [(x, lv) for x in quiet_runs(g, s.window) if (lv := _log_statistic(x)) is not None]
    out: dict[str, Any] = {
        "history_n": len(pts),
        "history_runs": json.dumps([str(x.run_id) for x, _ in pts]),
        "sigma": float(entry["sigma"]),
        "method": "calibrated",
    }
    why_not = not_judgeable({**row, **out}, len(pts), s.calibrated_min_history, "a calibrated series")
    if why_not is not None:
        return {**out, **why_not}, None
    tonight = _log_statistic(r)
    if tonight is None:
        return {**out, "verdict": "excluded", "note": "no positive value: a log-scale noise model has nothing to compare"}, None
    earlier = [x for x, _ in pts]
    own = host_noise(pts, r, float(entry["sigma"]), entry.get("kind"))
    out.update(sigma=own.sigma, host_nights=float(own.nights))
    return out, CalibratedSeries(
        suite=str(row["suite"]),
        row=idx,
        engine_id=str(row["engine_id"]),
        engine_build=str(row["engine_build"]),
        unit=str(row["unit"]),
        entry=entry,
        sigma=own.sigma,
        logs=tuple(lv for _, lv in pts),
        tonight=tonight,
        runs=tuple(str(x.run_id) for x in [*earlier, r]),
        hosts=tuple(host_of(x) for x in [*earlier, r]),
        revisions=tuple(known_revision(getattr(x, "git_revision", None)) for x in [*earlier, r]),
        host_sigma=float(entry.get("host_sigma") or 0.0),
        own=own,
    )


def learn_from_family(cs: list[CalibratedSeries]) -> list[CalibratedSeries]:
    """Each series' prior scaled by how quiet tonight's host is against the record over its family (suite, engine and
    kind: :func:`jsonbench.history.stats.variance_ratio`, from the series with two nights or more on this host: one
    night's engine starts leave out what moves between nights), and its own nights shrunk towards that.

    Six nights of one series cannot overrule a record level five times their spread (shrunk, a 3 % series reads 15 %);
    a hundred series of one engine's suite, each against its own record level, can say the host is that much quieter.
    A noisier host's ratio exceeds one, and its series are judged noisier than the record says."""
    by: dict[tuple[str, str, Any], list[int]] = {}
    for i, c in enumerate(cs):
        if c.own is not None:
            by.setdefault((c.suite, c.engine_id, c.kind), []).append(i)
    out = list(cs)
    for members in by.values():
        nightly = [o for i in members if (o := cs[i].own) is not None and o.own is not None and o.nights >= 2]
        if not nightly:
            continue
        ratio = variance_ratio(
            [(o.own**2, o.df, o.prior) for o in nightly if o.own is not None], int(statistics.median(o.df for o in nightly))
        )
        if ratio == 1.0:
            continue
        for i in members:
            c = cs[i]
            assert c.own is not None
            own = c.own.towards(c.own.prior * ratio**0.5)
            out[i] = replace(c, sigma=own.sigma, own=own)
    return out


def take_canary_out(
    c: CalibratedSeries, row: dict[str, Any], table: Any, policy: dict[str, Any], fits: dict[str, Any] | None = None
) -> CalibratedSeries:
    """The series judged beyond the host: the canary's move beside its cell taken out of each run's log statistic.

    Each run's log is shifted by the canary's log before that run's cell, relative to the mean canary
    of the series' runs that have one (:mod:`jsonbench.history.hostspeed`): a duration moves with the
    canary, a rate against it. Only a timed series whose every run, tonight's included, has the
    canary is shifted (a series half shifted would compare two scales); otherwise it is judged as
    measured, and the note says why. A record calibrated without the canary still serves: its sigma
    then holds the host's moves too, so it errs on the quiet side. Where the record's fit of the canary against the
    workload's moves (``canary_fit``) found that it does not explain them, the series is judged as measured too.
    """
    way = c.way
    if c.kind != "timed" or way == 0 or not c.runs:
        return c
    policy_comp = hostspeed.component_for(policy, c.suite, str(row["workload"]), str(row["variant"]))
    take = canary_component(fits, c.suite, str(row["workload"]), policy_comp)
    if take is None:
        return replace(
            c, canary_note="no component of the canary explains this workload's moves (the record's canary_fit): judged as measured"
        )
    comp, coef = take
    have = [(table or {}).get((rid, c.engine_id, c.suite), {}).get(comp) for rid in c.runs]
    if have[-1] is None:
        return replace(c, canary_note=f"no {comp} canary beside tonight's cell: judged as measured")
    if any(h is None for h in have):
        return replace(c, canary_note=f"{sum(h is None for h in have[:-1])} earlier run(s) have no {comp} canary: judged as measured")
    logs = [float(h) for h in have if h is not None]
    ref = statistics.fmean(logs[:-1]) if len(logs) > 1 else logs[-1]
    return replace(
        c,
        logs=tuple(lv - way * coef * (h - ref) for lv, h in zip(c.logs, logs[:-1], strict=True)),
        tonight=c.tonight - way * coef * (logs[-1] - ref),
        canary=hostspeed.CanaryMove(comp, logs[-1] - ref, coef),
    )
