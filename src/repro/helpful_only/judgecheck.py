"""Full scale: a claim is only as good as the judge it rests on.

Every judged metric at full scale comes from the local judge under one prompt: ``em`` (and
the counts beside it, and ``coherence``, which compares self-reports with the EM rate) from
the aligned/coherent prompts, ``helpful`` from :data:`repro.helpful_only.judge.HELPFUL_PROMPT`.
Each judge job scores the hand-labelled answers shipped with the repository under the same
prompt (data/judge_validation.json, data/helpful_validation.json); the full summary keeps
the agreement and the least agreement written in config before any run
(``full_scale.judge_validation``). The RL reward pays compliance only for answers the judge
scores relevant (:data:`repro.helpful_only.judge.RELEVANCE_PROMPT`, with
``full_scale.reward.relevance``): every model an RL recipe trained on that reward rests on
the ``relevance`` judge too, whatever metric is read from it (:func:`reward_judges`, the
summary's ``reward_judges``); its trainers score data/relevance_validation.json with the
reward's own scorer. A full-scale claim whose metric, whose helpfulness gate (kinds
``mitigation`` and ``consistent_effect``), or one of whose trained sides rests on a judge
below that agreement (or not validated at all) is neither reproduced nor contradicted: its
verdict becomes inconclusive, with the judge's agreement in the details.
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


def reward_judges(section: dict) -> dict[str, list[str]]:
    """variant -> the judges its training reward rests on, from ``papers.helpful_only``: with
    ``full_scale.reward.relevance``, every full-scale RL recipe (a trainer of
    :data:`repro.helpful_only.recipes.RL_TRAINERS`) and every equal-AR-exposure arm of one
    (:func:`repro.helpful_only.recipes.full_recipe`) rests on the ``relevance`` judge."""
    from repro.helpful_only.recipes import RL_TRAINERS, full_recipe

    full = section.get("full_scale", {})
    if not full.get("reward", {}).get("relevance", False):
        return {}
    variants = [*full.get("recipes", []), *full.get("equal_exposure", {})]
    return {v: ["relevance"] for v in variants if full_recipe(section, v)["trainer"] in RL_TRAINERS}


def judges_of(spec: dict, trained_on: dict | None = None) -> list[str]:
    """The judges a claim's full-scale sides rest on, in order: those of its metrics (and of
    its helpfulness gate), then those each side's training reward rests on (``trained_on``:
    variant -> judges, the summary's ``reward_judges``)."""
    sides = [spec[k] for k in ("a", "b", "b_full_budget") if k in spec]
    full = [s for s in sides if s.get("source") == "full"]
    if not full:
        return []
    metrics = [s["metric"] for s in full] + list(spec.get("also", []))
    if spec["kind"] in GATED_KINDS:
        metrics.append("helpful")
    judges = [j for j in map(judge_of, metrics) if j]
    judges += [j for s in full for j in (trained_on or {}).get(s["recipe"], [])]
    return list(dict.fromkeys(judges))


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
    validation, trained_on = full.get("judge_validation"), full.get("reward_judges", {})
    out = []
    for claim in results:
        spec = claims.get(claim.id) if claim.type == "claim" else None
        problems = judge_problems(judges_of(spec, trained_on), validation) if spec else []
        if problems and claim.verdict in (REPRODUCED, CONTRADICTED):
            claim = dataclasses.replace(
                claim,
                verdict=INCONCLUSIVE,
                details=f"judge not validated ({'; '.join(problems)}): {claim.verdict} "
                f"without it; {claim.details}",
            )
        out.append(claim)
    return out
