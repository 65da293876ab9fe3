"""The noise model (calibration record), drift judged against it, and the campaign command, on synthetic history.

Runs of large_document_update on PostgreSQL 16 and 17 are staged and published as the DAG does
(checks_synth, seeded noise: the same numbers every time), under the hardware label ``synth`` so the
record goes under the results folder. Nothing here measures a timing: the assertions are about what
the record names and holds, and what the statistics decide on fixed inputs.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from jsonbench.history import noise, stats
from jsonbench.history.drift import harness_words
from jsonbench.history.stats import benjamini_hochberg, host_mix

LABEL = "synth"


def test_label_local_is_committed_in_include(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JSONBENCH_INCLUDE_DIR", str(tmp_path / "inc"))
    assert noise.record_path("local", "laptop", tmp_path / "results") == tmp_path / "inc" / "calibration" / "local" / "laptop.json"
    assert (
        noise.record_path("rack-7", "laptop", tmp_path / "results")
        == (tmp_path / "results").resolve() / "calibration" / "rack-7" / "laptop.json"
    )


def test_benjamini_hochberg_matches_the_step_up_by_hand() -> None:
    p = [0.01, 0.04, 0.03, 0.005, 0.5]
    # sorted: 0.005 (x5/1 = 0.025), 0.01 (x5/2 = 0.025), 0.03 (x5/3 = 0.05), 0.04 (x5/4 = 0.05), 0.5 (x5/5 = 0.5)
    assert benjamini_hochberg(p) == pytest.approx([0.025, 0.05, 0.05, 0.025, 0.5])
    assert benjamini_hochberg([]) == []


def test_tail_and_thresholds_are_consistent() -> None:
    tail = {"z0": 3.0, "beta": 2.0, "share": 0.05}
    for p in (0.05, 1e-3, 1e-6):
        assert stats.tail_p(stats.tail_z(p, tail), tail) == pytest.approx(p)
    assert stats.tail_z(1e-6, tail) > stats.tail_z(1e-6, None), "the honest runs' tail is heavier than the normal one"
    thr, mds = stats.thresholds(0.03, 1000)
    assert stats.MIN_EFFECT <= thr < mds
    assert stats.thresholds(0.03, 1000, nights=3)[1] < mds
    assert stats.shift_for(1e6, 1.0) == pytest.approx(99.0), "quoted shifts stop at 100x"
    assert math.isclose(stats.norm_sf(0.0), 0.5)


ENGINES3 = ["postgres-16", "postgres-17", "postgres-18"]


def test_the_host_move_is_its_suites_median_engine_or_every_familys() -> None:
    moves = {
        ("catalogue", "postgres-16"): 0.08,
        ("catalogue", "postgres-17"): 0.09,
        ("catalogue", "postgres-18"): 0.30,  # one version regressed on top: the median is another's
        ("sqlite_jsonb", "sqlite-3.46.1"): 0.02,  # one engine of its suite: the run's median family
    }
    assert stats.host_move(moves) == {"catalogue": 0.09, "sqlite_jsonb": pytest.approx((0.08 + 0.09) / 2)}
    assert stats.host_move({("catalogue", "postgres-16"): 0.5, ("catalogue", "postgres-17"): 0.4}) == {"catalogue": 0.0}
    # Where the move was read from engines beside a family (a contrast can be judged), and where it is the 0 of too few.
    assert stats.host_seen(moves) == {"catalogue", "sqlite_jsonb"}
    assert stats.host_seen({("catalogue", "postgres-16"): 0.5, ("catalogue", "postgres-17"): 0.4}) == set()


def test_a_move_of_every_engine_is_worded_by_the_harness_revisions() -> None:
    """The data cannot tell a harness regression from a host that moved every engine unseen by the canary; the runs'
    revisions narrow it: a night past a revision change names it, one at its reference's revision says what else it can
    be, and runs without a revision say neither."""

    def words(revisions: list[str], nights: int = 1, base: int = 0) -> str:
        return harness_words(revisions, nights, base)

    old, new = "354bed3" + "0" * 33, "95bbde1" + "0" * 33
    assert words([old, old, new]).startswith(
        "a harness or setting change: the harness changed since its reference runs (354bed3 -> 95bbde1);"
    )
    assert "(354bed3 -> 95bbde1-dirty);" in words([old, old, f"{new}-dirty"])
    same = words([old, new, new])
    assert same.startswith("a harness or setting change at its reference runs' revision (95bbde1)") and "canary does not feel" in same
    # two nights' window: both are tonight's side; the reference after the change point (base) alone is compared
    assert "changed since" in words([new, old, old, new, new], nights=2, base=1)
    assert "changed since" not in words([old, new, new, new], nights=2, base=1)
    assert words(["unknown", "unknown", new]) == words(["", old]) == "a harness or setting change, not the host"


def test_levels_split_the_starts_inside_a_host_from_the_hosts() -> None:
    """Two hosts, two starts each: between starts is pooled inside each host, between hosts is what the means add."""
    start, start_df, host, host_df = stats.levels([0.0, 0.1, 0.5, 0.6], ["a", "a", "b", "b"])
    assert start_df == 2 and start == pytest.approx(math.sqrt(0.005))
    # the means 0.05 and 0.55: variance 0.125, less what two starts put into each mean (0.005 / 2)
    assert host_df == 1 and host == pytest.approx(math.sqrt(0.125 - 0.0025))
    assert stats.levels([0.0, 0.1, 0.2], ["a", "a", "a"])[2:] == (None, 0), "one host has no between-hosts level"
    assert stats.levels([0.0, 0.3], ["a", "b"])[:2] == (None, 0), "one start per host has no between-starts level"


def test_a_history_of_other_hosts_pays_the_between_hosts_level() -> None:
    assert host_mix(["a"], ["a", "a", "a"]) == 0.0, "a host against its own history: starts only"
    assert host_mix(["b"], ["a"]) == 2.0, "two hosts' effects differ by twice the variance of one"
    assert host_mix(["b"], ["a", "b"]) == pytest.approx(0.5)
    assert host_mix(["a", "b"], ["a", "b"]) == 0.0


def test_a_night_under_a_cpu_quota_is_a_host_of_its_own() -> None:
    """The canary cannot take a quota out of every timing (the tail latency of four clients queueing on 1.2 cores), so a
    quota night is judged against its full-speed history with the between-hosts level too."""
    from types import SimpleNamespace

    full = SimpleNamespace(host_boot_id="1a2b3c4d", host_cpu_quota=None)
    slow = SimpleNamespace(host_boot_id="1a2b3c4d", host_cpu_quota=1.2)
    nan = SimpleNamespace(host_boot_id="1a2b3c4d", host_cpu_quota=float("nan"))
    assert noise.host_of(full) == noise.host_of(nan) == "1a2b3c4d"
    assert noise.host_of(slow) == "1a2b3c4d+quota1.2"
    assert noise.host_of(SimpleNamespace(host="read+quota1.2", host_boot_id="x", host_cpu_quota=None)) == "read+quota1.2"
    assert host_mix([noise.host_of(slow)], [noise.host_of(full)] * 2) == 2.0
    assert host_mix([noise.host_of(full)], [noise.host_of(full)] * 2) == 0.0
