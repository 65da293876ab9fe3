"""The drift policy's knobs, read once before any row is judged (``drift.json`` with ``<suite>.drift.json`` over it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Settings:
    """The policy's knobs for one drift frame, read once before any row is judged."""

    min_history: int
    det_min_history: int
    window: int
    recent: int
    mode: str
    include: Any
    exclude: set[Any]
    calibrated_min_history: int = 1
    windows: int = 3
    q: float = 0.01
    min_effect: float = 0.05
    sampled_min_effect: float = 0.01
    family_verdict_p: float = 0.05
    #: ``(suite, workload, variant)`` the harness stopped making, with why (the policy's ``retired_variants``).
    retired: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def leaves_out(self, metric: Any) -> bool:
        """Whether the policy leaves ``metric`` out (``include_metrics``, ``exclude_metrics``)."""
        return bool(self.include and metric not in self.include) or metric in self.exclude

    @classmethod
    def of(cls, policy: dict[str, Any]) -> Settings:
        return cls(
            min_history=int(policy.get("min_history", 4)),
            det_min_history=int(policy.get("deterministic_min_history", 1)),
            window=int(policy.get("window", 30)),
            recent=int(policy.get("recent_runs", 3)),
            mode=str(policy.get("points", "samples")),
            include=policy.get("include_metrics"),
            exclude=set(policy.get("exclude_metrics") or []),
            calibrated_min_history=int(policy.get("calibrated_min_history", 1)),
            windows=int(policy.get("calibrated_windows", 3)),
            q=float(policy.get("fdr_q", 0.01)),
            min_effect=float(policy.get("min_effect", 0.05)),
            sampled_min_effect=float(policy.get("sampled_min_effect", 0.01)),
            family_verdict_p=float(policy.get("family_verdict_p", 0.05)),
            retired=retired_variants(policy),
        )


def retired_variants(policy: dict[str, Any]) -> dict[tuple[str, str, str], str]:
    """The policy's ``retired_variants``: ``(suite, workload, variant)`` -> why the harness no longer makes it.

    A renamed series (the fixed-count runs' one client) leaves its old name in every user's history; without
    this, the first night after the change would report each old series as lost.
    """
    out: dict[tuple[str, str, str], str] = {}
    for entry in policy.get("retired_variants") or []:
        why = f"retired by the harness: {entry['why']}" + (f" (now {entry['successor']})" if entry.get("successor") else "")
        for variant in entry["variants"]:
            out[(str(entry["suite"]), str(entry["workload"]), str(variant))] = why
    return out
