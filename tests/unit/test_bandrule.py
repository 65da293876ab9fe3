"""The band rule (jsonbench.checks.bandrule): every timing band is the seed's conclusion, computed, not fitted.

Static properties over the project's own files, and the rule's arithmetic on made-up findings: the band holds
the seed's evidence, reaches its order of magnitude and no further, never the opposite conclusion (a tie
fails), and a scale that moves a figure says so with a mechanism whose arithmetic is in the mechanisms file.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from jsonbench.checks.bandrule import CLASS_FACTOR, band_spec, evidence, load_arithmetic, rule_band
from jsonbench.checks.findings import SCALES, band_at
from jsonbench.checks.library import load_library


def _all() -> list[tuple[str, dict]]:
    return [(suite, f) for suite, d in load_library().reproduction.items() for f in d["findings"]]


@pytest.mark.parametrize("scale", SCALES)
def test_every_timing_band_holds_the_seeds_figure_unless_a_mechanism_or_a_gate_says_why(scale: str) -> None:
    for suite, f in _all():
        if f.get("kind", "timing") != "timing":
            continue
        value = (f.get("seed") or {}).get("value")
        spec = f["bands"].get(scale, {})
        b = band_at(f, scale)
        if value is None or b.not_applicable:
            assert value is None or "gate" in spec, f"{suite}/{f['id']}@{scale}: a timing finding not judged is gated"
            continue
        assert b.holds(float(value)) or spec.get("mechanism"), f"{suite}/{f['id']}@{scale}: the seed's {value} outside [{b.min}, {b.max}]"


@pytest.mark.parametrize("scale", SCALES)
def test_no_timing_band_accepts_the_opposite_or_a_tie(scale: str) -> None:
    for suite, f in _all():
        b = band_at(f, scale)
        if f.get("kind", "timing") != "timing" or b.not_applicable:
            continue
        opp = f["opposite"]
        if "below" in opp:
            assert not b.holds(opp["below"]) and not b.holds(opp["below"] * 0.999), f"{suite}/{f['id']}@{scale}"
        if "above" in opp:
            assert not b.holds(opp["above"]) and not b.holds(opp["above"] * 1.001), f"{suite}/{f['id']}@{scale}"


def test_every_mechanism_names_arithmetic_that_exists() -> None:
    lib = load_library()
    for suite, d in lib.reproduction.items():
        arithmetic = load_arithmetic(lib.root, suite)
        for f in d["findings"]:
            for scale, spec in f["bands"].items():
                if spec.get("mechanism"):
                    mech = arithmetic[spec["mechanism"]]
                    assert len(mech.why) > 120 and any(ch.isdigit() for ch in mech.why), (
                        f"{suite}/{f['id']}@{scale}: arithmetic, with numbers"
                    )


def _finding(**kw: object) -> dict:
    f = {"id": "x", "kind": "timing", "depends_on": ["host_speed"], "unit": "x", "opposite": {"below": 1.0}}
    f.update(kw)
    return f


def test_the_band_is_the_order_of_magnitude_around_the_seeds_evidence() -> None:
    f = _finding(seed={"value": 14.23, "range": [10.0, 14.0], "range_source": "three runs"})
    assert evidence(f) == (10.0, 14.23)
    b = rule_band(f, "laptop", {}, {})
    assert b.min == pytest.approx(10.0 / CLASS_FACTOR, rel=0.01) and b.max == pytest.approx(14.23 * CLASS_FACTOR, rel=0.01)
    assert b.min <= 10.0 / CLASS_FACTOR and b.max >= 14.23 * CLASS_FACTOR  # rounded outwards, never narrower
    assert math.isclose(CLASS_FACTOR**2, 10.0)


def test_the_opposite_is_cut_off_and_a_share_stops_at_one() -> None:
    near = rule_band(_finding(seed={"value": 1.14}, opposite={"below": 1.0, "above": 2.5}), "full", {}, {})
    assert (near.min, near.max) == (1.0, 2.5) and "cut off" in near.reason
    share = rule_band(_finding(seed={"value": 0.51}, unit="share", opposite={"below": 0.05}), "full", {}, {})
    assert share.max == 1.0 and share.min == pytest.approx(0.51 / CLASS_FACTOR, rel=0.01)
    direction = rule_band(_finding(seed={"value": None}), "full", {}, {})
    assert (direction.min, direction.max) == (1.0, None) and "direction" in direction.reason


def test_a_mechanism_multiplies_the_evidence_and_a_gate_judges_nothing(tmp_path: Path) -> None:
    (tmp_path / "s.mechanisms.yaml").write_text("arithmetic:\n  cached:\n    factor: [1, 4]\n    why: the copy runs 4x faster\n")
    arithmetic = load_arithmetic(tmp_path, "s")
    f = _finding(seed={"value": 10.0})
    moved = rule_band(f, "smoke", {"mechanism": "cached"}, arithmetic)
    assert moved.max == pytest.approx(10.0 * 4 * CLASS_FACTOR, rel=0.01) and "cached" in moved.reason
    assert band_spec(f, "smoke", {"gate": "no workers"}, arithmetic) == {"gate": "no workers"}
    with pytest.raises(KeyError):
        rule_band(f, "smoke", {"mechanism": "unknown"}, arithmetic)


def test_a_mechanism_bounded_from_below_only_opens_the_band_above(tmp_path: Path) -> None:
    """A measurement that leaves out a fixed cost the seed's figure carried can only raise the ratio: the factor's
    upper end is null, the band has no maximum, and the opposite conclusion is still cut off."""
    (tmp_path / "s.mechanisms.yaml").write_text("arithmetic:\n  no_round_trip:\n    factor: [1, null]\n    why: the fixed cost left out\n")
    arithmetic = load_arithmetic(tmp_path, "s")
    assert arithmetic["no_round_trip"].factor == (1.0, math.inf)
    open_band = rule_band(_finding(seed={"value": 1.27}), "laptop", {"mechanism": "no_round_trip"}, arithmetic)
    assert (open_band.min, open_band.max) == (1.0, None) and "1 or more" in open_band.reason and "open" in open_band.reason
    spec = band_spec(_finding(seed={"value": 1.27}), "laptop", {"mechanism": "no_round_trip"}, arithmetic)
    assert spec["max"] is None and spec["min"] == 1.0 and spec["mechanism"] == "no_round_trip"
