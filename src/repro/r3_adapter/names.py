"""Names shared by the steps and the config check, importable without torch (the Snakefile
imports the config check while it parses)."""

from __future__ import annotations

from typing import Any

CLEAN = "clean"
METRICS = ("accuracy", "dustbin_free_accuracy", "nc_accuracy", "epe", "absrel")
DIAGNOSTICS = ("gt_mass", "entropy", "precision")


def domain_name(severity: int) -> str:
    return CLEAN if severity == 0 else f"severity{severity}"


def expects_identity(spec: dict[str, Any]) -> bool:
    """Whether a method starts as the frozen model (all but the ungated 3R variant)."""
    relational = (spec.get("adapters") or {}).get("relational") or {}
    return relational.get("refinement", True)
