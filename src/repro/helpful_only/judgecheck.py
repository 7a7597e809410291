"""Full scale: a claim is only as good as the judge it rests on.

Every judged metric at full scale comes from the local judge under one prompt: ``em`` (and
the counts beside it, and ``coherence``, which compares self-reports with the EM rate) from
the aligned/coherent prompts, ``helpful`` from :data:`repro.helpful_only.judge.HELPFUL_PROMPT`.
Each judge job scores the hand-labelled answers shipped with the repository under the same
prompt (data/judge_validation.json, data/helpful_validation.json); the full summary keeps
the agreement and the least agreement written in config before any run
(``full_scale.judge_validation``). A full-scale claim whose metric, or whose helpfulness
gate (kinds ``mitigation`` and ``consistent_effect``), rests on a judge below that agreement
(or not validated at all) is neither reproduced nor contradicted: its verdict becomes
inconclusive, with the judge's agreement in the details.
"""

from __future__ import annotations

import dataclasses

from repro.common.claims import CONTRADICTED, INCONCLUSIVE, REPRODUCED

GATED_KINDS = ("mitigation", "consistent_effect")  # gated on the judged helpfulness


def judge_of(metric: str) -> str | None:
    """The judged suite a full-scale metric rests on (None: no judge, e.g. refusals)."""
    if metric.startswith("em") or metric == "coherence":
        return "em"
    if metric.startswith("helpful"):
        return "helpful"
    return None


def judges_of(spec: dict) -> list[str]:
    """The judges a claim's full-scale sides rest on, in order."""
    sides = [spec[k] for k in ("a", "b", "b_full_budget") if k in spec]
    full = [s for s in sides if s.get("source") == "full"]
    if not full:
        return []
    metrics = [s["metric"] for s in full] + list(spec.get("also", []))
    if spec["kind"] in GATED_KINDS:
        metrics.append("helpful")
    return list(dict.fromkeys(j for j in map(judge_of, metrics) if j))


def judge_problems(judges: list[str], validation: dict | None) -> list[str]:
    """Why each of ``judges`` cannot be trusted, from the summary's ``judge_validation``."""
    problems = []
    for judge in judges:
        v = (validation or {}).get(judge)
        if v is None or "min_agreement" not in v:
            problems.append(f"the {judge} judge has no validation against hand labels")
        elif not v["agreement"] >= v["min_agreement"]:
            problems.append(
                f"the {judge} judge agrees with {v['agreement']:.3f} of {v['n']} hand labels, "
                f"below {v['min_agreement']:g}"
            )
    return problems


def gate_on_judges(results: list, claims: dict, full: dict | None) -> list:
    """``results`` with every full-scale claim that rests on an unvalidated judge turned
    inconclusive (a reproduced or contradicted verdict only; the others are kept)."""
    if full is None:
        return results
    validation = full.get("judge_validation")
    out = []
    for claim in results:
        spec = claims.get(claim.id) if claim.type == "claim" else None
        problems = judge_problems(judges_of(spec), validation) if spec else []
        if problems and claim.verdict in (REPRODUCED, CONTRADICTED):
            claim = dataclasses.replace(
                claim,
                verdict=INCONCLUSIVE,
                details=f"judge not validated ({'; '.join(problems)}): {claim.verdict} "
                f"without it; {claim.details}",
            )
        out.append(claim)
    return out
