"""MaLoRA's claims and checks, judged on the summary (``repro.malora.evaluate``).

``KINDS`` maps each claim and check kind of the config to its handler
``handler(id, spec, inputs)`` (the λ-sweep claims in :mod:`repro.malora.claims_sweep`, the
merging claims in :mod:`repro.malora.claims_merge`, the checks in
:mod:`repro.malora.checks`); ``inputs`` is ``{"summary", "section": papers.malora, "checks":
its checks}``. A claim over several settings (overlaps, baselines) holds only if it holds in
every one; its measured number is the least favourable setting's. Every margin (``delta``,
``retention_floor``) comes from the claim's config entry. A claim whose study has a failed
run (a seed that fails a sanity check, :mod:`repro.malora.sanity`) is "not reproduced",
naming it.
"""

from __future__ import annotations

import functools

from repro.common.claims import NOT_REPRODUCED, Claim, run_claims
from repro.common.io import read_json, write_json
from repro.malora import arms, checks, claims_merge, claims_sweep, sanity

# the study each claim kind reads (paired comparisons: their ``dataset``)
STUDY = {
    "alignment_peak": "sweep",
    "tradeoff": "sweep",
    "closed_form": "sweep",
    "positive_margins": "linear",
    "near_optimal": "linear",
}
RULE_KEYS = ("method", "baselines", "fallback", "reference", "reference_fallback")


def _rules_read(spec) -> set[str] | None:
    """The merge rules a claim reads (None: every rule, for the worst-rule arm or a loss)."""
    names = set()
    for key in RULE_KEYS:
        value = spec.get(key)
        names |= set(value) if isinstance(value, list) else {value} if value else set()
    if arms.WORST_RULE in names or spec.get("failed_seed") == "loss":
        return None
    return names


def _on_sound_runs(handler):
    """``handler`` run only where no seed of its study failed a sanity check; otherwise the
    claim is "not reproduced", naming the failed runs."""

    @functools.wraps(handler)
    def judged(claim_id, spec, inputs) -> Claim:
        study = STUDY.get(spec["kind"]) or spec["dataset"]
        failed = sanity.failed_runs(inputs, study, _rules_read(spec))
        if not failed:
            return handler(claim_id, spec, inputs)
        return Claim(
            claim_id,
            spec["claim"],
            "",
            NOT_REPRODUCED,
            paper_value=spec.get("paper_value"),
            details=f"failed runs ({study}): " + "; ".join(failed),
        )

    return judged


CLAIM_KINDS = {
    "alignment_peak": claims_sweep.alignment_peak,
    "tradeoff": claims_sweep.tradeoff,
    "closed_form": claims_sweep.closed_form,
    "positive_margins": claims_merge.positive_margins,
    "near_optimal": claims_merge.near_optimal,
    "paired_comparison": claims_merge.paired_comparison,
    "scale_or_direction": claims_merge.scale_or_direction,
}
KINDS = {
    **{kind: _on_sound_runs(handler) for kind, handler in CLAIM_KINDS.items()},
    "alignment_small_lambda": claims_sweep.alignment_small_lambda,
    **checks.KINDS,
}


def check_claims(claims: dict, checks_: dict, section: dict, summary: dict, out: str) -> list:
    inputs = {"summary": summary, "section": section, "checks": checks_}
    results = run_claims(claims, KINDS, inputs, checks_)
    write_json(out, results)
    return results


def main(argv=None) -> None:
    from repro.common.cli import paper_section, step_parser

    parser = step_parser("Judge MaLoRA's claims and checks.", paper="malora")
    parser.add_argument("--summary", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    section = paper_section(args.config, "malora")
    check_claims(
        section.get("claims", {}),
        section.get("checks", {}),
        section,
        read_json(args.summary),
        args.out,
    )


if __name__ == "__main__":
    main()
