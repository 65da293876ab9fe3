"""How a calibrated row's note says what was found: the harness's revisions, the canary, the family, the hosts.

Each function words one part of a note from plain values; :mod:`~jsonbench.history.drift.verdict` puts them together.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from jsonbench.history.hostspeed import CanaryMove


def known_revision(value: Any) -> str:
    """A row's ``git_revision`` as a string, or ``""`` when the run recorded none (no git, an older row, a null)."""
    text = str(value) if value is not None else ""
    return "" if text in ("", "unknown", "None", "nan", "<NA>") else text


def short_revision(rev: str) -> str:
    """A ``git_revision`` as people read it: 7 hex digits, and ``-dirty`` when the tree had changes."""
    return rev[:7] + ("-dirty" if rev.endswith("-dirty") else "")


def harness_words(revisions: Sequence[str], nights: int, base: int) -> str:
    """What a move of every engine at once, the canary steady, can be, by the harness's revisions (``git_revision``) of
    each run of a series (tonight's last), its window of ``nights`` and its reference from ``base``.

    The data cannot tell a harness regression from a host that moved in a way the canary does not feel: both move every
    engine while the canary holds (honest nights of one host hours apart moved every PostgreSQL family 15-50 % with the
    canary within 7 %). The revisions can narrow it: a night whose harness differs from its reference runs' is most
    likely that change, if it touched what is measured; one at its reference's revision is a setting or dependency the
    revision does not show, or the host. Runs that recorded no revision say nothing here."""
    n = len(revisions)
    if n < nights + 1:
        return "a harness or setting change, not the host"
    window = {r for r in revisions[n - nights :] if known_revision(r)}
    ref = {r for r in revisions[base : n - nights] if known_revision(r)}
    if not window or not ref:
        return "a harness or setting change, not the host"
    if window - ref:
        was = ", ".join(sorted(short_revision(r) for r in ref))
        now = ", ".join(sorted(short_revision(r) for r in window - ref))
        return f"a harness or setting change: the harness changed since its reference runs ({was} -> {now}); read what it did to what is measured first"
    return (
        f"a harness or setting change at its reference runs' revision ({', '.join(sorted(short_revision(r) for r in window))}): "
        "a setting or dependency the revision does not show, or the host in a way the canary does not feel"
    )


def canary_words(canary: CanaryMove | None) -> str:
    """The canary's move beside the series' cell in words (slower positive)."""
    if canary is None:
        return "nothing (no canary)"
    f = canary.factor
    return "the same" if abs(f - 1) < 0.02 else f"{f - 1:+.1%} {'slower' if f > 1 else 'faster'}"


def family_words(verdict: tuple[int, float, float] | None, selected: bool, sign: float, p_family: float, verdict_p: float) -> str:
    """Why the series' family called it, if it did: by the family's sustained verdict, or by the family test."""
    if verdict is not None:
        return (
            f"its family moved {math.exp(verdict[1]) - 1:+.1%} beyond the host over {verdict[0]} nights, each night "
            f"the same way (the family's verdict, BH-adjusted p {verdict[2]:.2g} over the run's families); this series went "
            f"along, one-sided p {p_family * verdict_p:.2g}; "
        )
    if selected:
        return f"its family moved {math.exp(sign) - 1:+.1%} beyond the host, family test {min(p_family, 1e9):.2g} of its level; "
    return ""


def version_words(version: tuple[int, float, float, int, float, int], p_family: float, verdict_p: float) -> str:
    """Why the series' version called it: every suite of the version moved beyond the versions beside it."""
    nights, move, adjusted, suites, sigma, learned = version
    return (
        f"its version moved {math.exp(move) - 1:+.1%} beyond the versions beside it over {suites} suites and {nights} night(s) "
        f"(the version's test at sigma {sigma:.1%}, learned from {learned} earlier night(s) of this host and the record, "
        f"BH-adjusted p {adjusted:.2g} over the run's versions); this series went along, one-sided p {p_family * verdict_p:.2g}; "
    )


def workload_words(workload: tuple[int, float, float, float, int], p_family: float, verdict_p: float) -> str:
    """Why the series' workload called it: the workload's timings moved beyond the same workload's median version."""
    nights, move, adjusted, sigma, learned = workload
    return (
        f"its workload moved {math.exp(move) - 1:+.1%} beyond the same workload of the versions beside it over {nights} night(s) "
        f"(the workload's test at sigma {sigma:.1%}, learned from {learned} earlier night(s) of this host and the record, "
        f"BH-adjusted p {adjusted:.2g} over the run's workloads); this series went along, one-sided p {p_family * verdict_p:.2g}; "
    )


def common_words(sign: float, canary: CanaryMove | None, harness: str) -> str:
    """Every engine of the suite moved the family's way while the canary held: a harness or setting change."""
    return (
        f"every engine of the suite moved this way ({math.exp(sign) - 1:+.1%}) while the host measured {canary_words(canary)}: {harness}; "
    )


def host_words(canary: CanaryMove | None, canary_note: str, host_move: float) -> str:
    """The host's move beside the cell (the canary's, when it was taken out) and the engines' median move."""
    if canary is not None:
        taken = "taken out" if canary.share == 1.0 else f"{canary.share:.2f} of it taken out"
        return (
            f"the host beside this cell {canary_words(canary)} (canary {canary.component}, {taken}); "
            f"the engines' median move {math.exp(host_move) - 1:+.1%} (second opinion); "
        )
    return (
        f"{canary_note + '; ' if canary_note else ''}the host's own move tonight {math.exp(host_move) - 1:+.1%} "
        "(its suite's median engine, slower positive; families are judged against it); "
    )


def hosts_words(host_sigma: float, share: float | None) -> str:
    """The between-hosts level a history of other hosts' runs added, when it added any."""
    if host_sigma and share:
        return f"its history holds other hosts' runs: between hosts {host_sigma:.1%} added (share {share:.2f}); "
    return ""
