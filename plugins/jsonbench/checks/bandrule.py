"""The one rule that sets a timing finding's reproduction band: the seed's conclusion, not a host's range.

A reproduction band answers one question: does the seed's conclusion hold on this engine version? "jsonb
reads one key several times faster than json" holds on a slow host and a fast one, cold or warm. How far
tonight moved from this host's own history is drift's question (:mod:`jsonbench.history.drift`), not this
one's. So a band is never fitted to runs: it is computed here, from the seed's own evidence, for every
timing finding whose value depends on the host's speed (``depends_on`` holds ``host_speed``):

1. **Evidence** ``[e_lo, e_hi]``: the seed's figure, widened to the spread the seed itself prints for it
   (``seed.range``: its repeated runs, its two versions, or, for a finding on this project's generated
   documents, the seed's range over every shape it timed). A finding the seed states without a figure
   gives its evidence in ``seed.range`` from the seed's arithmetic, or none: then only its direction is
   banded.
2. **Mechanism** (optional, per scale): where the scale itself moves the figure (a table that fits the
   CPU caches at ``smoke``, a category fifty times smaller), the evidence is multiplied by the factor range
   ``[m_lo, m_hi]`` that the suite's mechanisms file derives with arithmetic (``arithmetic:`` in
   ``<suite>.mechanisms.yaml``), named by the band's ``mechanism``. "This machine measured x-y" is not a
   mechanism. Where the arithmetic bounds the move from below only (``m_hi`` null: a measurement that leaves out
   a fixed cost the seed's figure carried can only raise the ratio, by as much as the cost was), the band is open
   above.
3. **Magnitude class**: the band is ``[e_lo * m_lo / CLASS_FACTOR, e_hi * m_hi * CLASS_FACTOR]``: the same
   order of magnitude as the evidence (``CLASS_FACTOR`` is half a decade, sqrt(10), each way). A ratio of two
   designs measured side by side on one host keeps its order of magnitude across hosts; what moves it within
   that order (cache sizes, memory bandwidth against CPU speed, a compiler) is what the seed's own runs show
   moving it: seed 003 printed 2.2-5.5x for one ratio over three runs of one machine.
4. **The opposite conclusion** (``opposite``) is cut off, strictly: a tie fails. A share is at most 1.

Or the band is a **gate** (``{"gate": "why"}``): the finding is not judged at that scale, because its
mechanism does not hold there (no parallel worker is planned on a 20,000-row table, 20 large documents time
nothing). Deterministic facts are not this module's: they are checked exactly (``kind: deterministic``).
A measured value that depends on no host property (a WAL ratio over a fixed count of updates, ANALYZE's
sample) is banded by its own mechanism, named in ``mechanism`` likewise, and this rule leaves it alone.

``jsonbench-dev bands`` (:mod:`jsonbench_dev.bands`) writes the computed bands into the reproduction files;
:func:`jsonbench.checks.validate.validate_library` refuses a file whose timing band differs from the rule's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Half a decade each way: the band is the order of magnitude around the seed's evidence.
CLASS_FACTOR: float = math.sqrt(10.0)
#: The name the bands carry in their ``rule`` field, and which reasons cite.
RULE_NAME = "seed_class"
#: Units whose values cannot exceed 1 (a share of updates).
SHARE_UNITS = frozenset({"share"})
#: The reproduction file's ``not_derived`` for a band this rule set: it comes from the seed, not from runs.
NOT_DERIVED = "set by the band rule (jsonbench.checks.bandrule) from the seed's own evidence, not derived from any run"


@dataclass(frozen=True)
class Mechanism:
    """A scale's move of a figure, derived with arithmetic in the suite's mechanisms file."""

    name: str
    factor: tuple[float, float]
    why: str


@dataclass(frozen=True)
class RuleBand:
    """What the rule computes for one finding at one scale: a band with its reason, or a gate."""

    min: float | None
    max: float | None
    reason: str
    gate: str | None = None
    mechanism: str | None = None


def governed(finding: dict[str, Any]) -> bool:
    """Whether the rule sets this finding's bands: a timing finding whose value depends on the host's speed."""
    return finding.get("kind", "timing") == "timing" and "host_speed" in (finding.get("depends_on") or [])


def evidence(finding: dict[str, Any]) -> tuple[float, float] | None:
    """``(e_lo, e_hi)``: the seed's figure widened to the spread it prints (``seed.range``), or None (direction only)."""
    seed = finding.get("seed") or {}
    value = seed.get("value")
    rng = seed.get("range")
    points: list[float] = []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        points.append(float(value))
    if isinstance(rng, list) and len(rng) == 2:
        points += [float(rng[0]), float(rng[1])]
    return (min(points), max(points)) if points else None


def load_arithmetic(expectations: Path, suite: str) -> dict[str, Mechanism]:
    """The ``arithmetic:`` section of ``<suite>.mechanisms.yaml``: name -> :class:`Mechanism`."""
    import yaml

    path = expectations / f"{suite}.mechanisms.yaml"
    if not path.exists():
        return {}
    raw = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("arithmetic") or {}
    out: dict[str, Mechanism] = {}
    for name, spec in raw.items():
        spec = spec if isinstance(spec, dict) else {}
        factor = spec.get("factor") or (1.0, 1.0)  # none: a host-independent finding's own arithmetic, no factor on a seed class
        # An upper factor of null: the arithmetic bounds the move from below only (the band is then open above).
        high = math.inf if factor[1] is None else float(factor[1])
        out[str(name)] = Mechanism(str(name), (float(factor[0]), high), " ".join(str(spec.get("why", "")).split()))
    return out


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def round_out(x: float, up: bool) -> float:
    """Three significant digits, rounded outwards (a rounded band never narrows what the rule computed)."""
    if x == 0 or not math.isfinite(x):
        return x
    digits = 2 - int(math.floor(math.log10(abs(x))))
    factor = 10**digits
    return (math.ceil(x * factor - 1e-9) if up else math.floor(x * factor + 1e-9)) / factor


def rule_band(finding: dict[str, Any], scale: str, spec: dict[str, Any], arithmetic: dict[str, Mechanism]) -> RuleBand:
    """The band the rule gives ``finding`` at ``scale``, where ``spec`` is the file's band there (read for ``gate`` and ``mechanism``)."""
    if spec.get("gate"):
        return RuleBand(None, None, str(spec["gate"]), gate=str(spec["gate"]))
    opposite = finding.get("opposite") or {}
    below, above = opposite.get("below"), opposite.get("above")
    ev = evidence(finding)
    name = spec.get("mechanism")
    mech = arithmetic.get(str(name)) if name else None
    if name and mech is None:
        raise KeyError(f"mechanism {name!r} is not in the suite's mechanisms file (arithmetic:)")
    m_lo, m_hi = mech.factor if mech else (1.0, 1.0)
    parts: list[str] = []
    if ev is None:
        lo: float | None = None
        hi: float | None = None
        parts.append("the seed states this conclusion without a figure: only its direction is banded")
    else:
        e_lo, e_hi = ev
        seed_text = _fmt(e_lo) if e_lo == e_hi else f"{_fmt(e_lo)}-{_fmt(e_hi)}"
        parts.append(f"the seed's evidence {seed_text}")
        if mech:
            span = f"{_fmt(m_lo)}-{_fmt(m_hi)}" if math.isfinite(m_hi) else f"{_fmt(m_lo)} or more"
            parts.append(f"times {span} at {scale} by the mechanism {mech.name!r} (arithmetic in the mechanisms file)")
        lo = round_out(e_lo * m_lo / CLASS_FACTOR, up=False)
        hi = round_out(e_hi * m_hi * CLASS_FACTOR, up=True) if math.isfinite(m_hi) else None
        parts.append(
            f"widened to its order of magnitude (x/{CLASS_FACTOR:.3g}, x*{CLASS_FACTOR:.3g}): [{_fmt(lo)}, {_fmt(hi) if hi is not None else 'open'}]"
        )
    cut: list[str] = []
    if below is not None and (lo is None or lo < below):
        lo = float(below)
        cut.append(f"at or below {_fmt(below)}")
    if above is not None and (hi is None or hi > above):
        hi = float(above)
        cut.append(f"at or above {_fmt(above)}")
    if finding.get("unit") in SHARE_UNITS and (hi is None or hi > 1.0):
        hi = 1.0
        cut.append("a share above 1")
    if cut:
        parts.append("the opposite conclusion cut off (" + "; ".join(cut) + ")")
    reason = f"Rule {RULE_NAME}: " + ", ".join(parts) + "."
    return RuleBand(lo, hi, reason, mechanism=str(name) if name else None)


def band_spec(finding: dict[str, Any], scale: str, spec: dict[str, Any], arithmetic: dict[str, Mechanism]) -> dict[str, Any]:
    """The reproduction file's band object at ``scale`` as the rule writes it."""
    rb = rule_band(finding, scale, spec, arithmetic)
    if rb.gate:
        return {"gate": rb.gate}
    out: dict[str, Any] = {"min": rb.min, "max": rb.max, "rule": RULE_NAME, "reason": rb.reason}
    if rb.mechanism:
        out["mechanism"] = rb.mechanism
    out["derived_from"] = []
    out["not_derived"] = NOT_DERIVED
    return out


def differs(written: dict[str, Any], computed: dict[str, Any]) -> str | None:
    """Why a written band is not the rule's (None when it is): the bounds, a gate, or a mechanism differ."""
    if "gate" in computed:
        return None if written.get("gate") == computed["gate"] else "the rule gates this scale"
    for end in ("min", "max"):
        a, b = written.get(end), computed.get(end)
        if (a is None) != (b is None) or (a is not None and b is not None and not math.isclose(float(a), float(b), rel_tol=1e-9)):
            return f"{end} {a!r} is not the rule's {b!r}"
    if written.get("rule") != RULE_NAME:
        return f"rule {written.get('rule')!r} is not {RULE_NAME!r}"
    return None
