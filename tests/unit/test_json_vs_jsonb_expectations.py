"""The json vs jsonb expectation files name only what the suite publishes, with sane bands.

Pure file checks (no server): a finding or seed figure that names a workload, variant or metric
the suite never records would fail every run's reproduction check or leave a blank in the report.
"""

from __future__ import annotations

import json

import pytest

from jsonbench import paths
from jsonbench.suites import get_suite
from jsonbench.suites.json_vs_jsonb import COMPRESSIONS, LAYOUT_METRICS, LAYOUTS, STORAGE_METRICS, TYPE_METRICS, TYPES

SUITE = "json_vs_jsonb"


def _published() -> set[tuple[str, str, str]]:
    """Every (workload, variant, metric) a complete run of the suite records."""
    out: set[tuple[str, str, str]] = set()
    for w in get_suite(SUITE).workloads:
        for lay in LAYOUTS:
            out |= {(w, lay, m) for m, _ in LAYOUT_METRICS}
            for typ in TYPES:
                out |= {(w, f"{lay}.{typ}", m) for m, _ in TYPE_METRICS}
                for comp in COMPRESSIONS:
                    out |= {(w, f"{lay}.{typ}.{comp}", m) for m, _ in STORAGE_METRICS}
    return out


def _load(kind: str) -> dict:
    return json.loads((paths.EXPECTATIONS_DIR / f"{SUITE}.{kind}.json").read_text(encoding="utf-8"))


def test_every_finding_term_is_published() -> None:
    published = _published()
    findings = _load("reproduction")["findings"]
    assert len(findings) >= 20
    for f in findings:
        for term in f.get("numerator", []) + f.get("denominator", []):
            key = (term["workload"], term.get("variant", "default"), term["metric"])
            assert key in published, f"{f['id']}: {key} is never recorded by the suite"
            # lz4 rows are not applicable on builds without lz4: such a finding must declare it, so that it is
            # not applicable there (with the reason) instead of failing, and judged where lz4 exists.
            if key[1].endswith(".lz4") or key[2].endswith("_lz4"):
                assert "lz4" in (f.get("requires") or []), f"{f['id']} depends on lz4 without requiring it"


@pytest.mark.parametrize("kind", ["reproduction"])
def test_bands_are_ordered_and_documented(kind: str) -> None:
    """Every scale has a band with a reason, or says why the finding does not apply there."""
    ids = set()
    for f in _load(kind)["findings"]:
        assert f["id"] not in ids, f"duplicate finding {f['id']}"
        ids.add(f["id"])
        documented = f.get("band_reason") or all(b.get("reason") or b.get("not_applicable") or b.get("gate") for b in f["bands"].values())
        assert documented and f.get("seed", {}).get("figure"), f["id"]
        assert set(f["bands"]) == {"smoke", "laptop", "full"}, f["id"]
        for scale, band in f["bands"].items():
            if "not_applicable" in band or "gate" in band:
                assert (band.get("not_applicable") or band.get("gate")).strip(), (f["id"], scale)
                continue
            assert band["min"] is not None and band["max"] is not None and band["min"] <= band["max"], (f["id"], scale)
            assert band.get("reason"), (f["id"], scale)
        seed = f["seed"].get("value")
        full = f["bands"]["full"]
        if seed is not None and f.get("kind") != "timing" and "min" in full:
            # Size and threshold facts at the seed's own scale: the seed's figure lies in the band, or the band's
            # seed_outside says why not (a field of its own: no phrase in a reason exempts a band).
            assert full["min"] <= seed <= full["max"] or str(full.get("seed_outside") or "").strip(), (f["id"], seed, full)


def test_every_seed_figure_names_a_published_metric() -> None:
    published = _published()
    for fig in _load("seed")["figures"]:
        key = (fig["workload"], fig.get("variant", "default"), fig["metric"])
        assert key in published, f"seed figure {key} is never recorded by the suite"
