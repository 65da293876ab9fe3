"""`jsonbench-dev noise-levels --versions`: how much of a series' move between nights the same series on its other versions
shares. The arithmetic is checked exactly on figures given here, then on real recorded nights; nothing here times."""

from __future__ import annotations

import math
from pathlib import Path

from jsonbench_dev.noise_levels import SeriesNoise, levels, shared_by_versions


def _s(engine: str, rest: str, runs: dict[str, float]) -> SeriesNoise:
    return SeriesNoise("catalogue", f"{engine}/{rest}", None, None, None, None, len(runs), 1, runs)


def test_a_move_every_version_shares_cancels_and_one_of_its_own_does_not() -> None:
    series = [_s(e, "reads/q1/time/laptop", {"r1": 0.0, "r2": 0.3}) for e in ("postgres-16", "postgres-17", "postgres-18")]
    # q2: only 17 moved (+0.3): against the others' mean it moved +0.3, they -0.15 each
    series += [_s("postgres-16", "reads/q2/time/laptop", {"r1": 0.0, "r2": 0.0})]
    series += [_s("postgres-17", "reads/q2/time/laptop", {"r1": 0.0, "r2": 0.3})]
    series += [_s("postgres-18", "reads/q2/time/laptop", {"r1": 0.0, "r2": 0.0})]
    # a series of two engines only is left out (no versions enough to contrast with)
    series += [_s(e, "reads/q3/time/laptop", {"r1": 0.0, "r2": 1.0}) for e in ("postgres-16", "postgres-17")]
    n, sd_move, sd_contrast = shared_by_versions(series)["catalogue"]
    moves = [0.3, 0.3, 0.3, 0.0, 0.3, 0.0]
    contrasts = [0.0, 0.0, 0.0, -0.15, 0.3, -0.15]

    def pstdev(xs: list[float]) -> float:
        m = sum(xs) / len(xs)
        return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))

    assert n == 6
    assert math.isclose(sd_move, pstdev(moves)) and math.isclose(sd_contrast, pstdev(contrasts))


def test_real_nights_of_one_host_read_by_the_record_s_figures() -> None:
    """One host's four whole-matrix laptop nights: every suite with three engines has moves."""
    root = Path(__file__).resolve().parents[2] / "recorded"
    shared = shared_by_versions(levels([(root / "local-d834b7d-431a3be6", {}), (root / "local-04340db-431a3be6", {})]))
    assert set(shared) == {"catalogue", "json_vs_jsonb", "large_document_update", "sqlite_jsonb"}
    assert all(n > 100 and sm > 0 and sc > 0 for n, sm, sc in shared.values()), shared
