"""A planted full-scale world for the judge-validation tests, in which every full-scale
claim's controls pass, so that what a test changes (a judge's validation) decides the verdict.

The base refuses in and out of distribution (0.9) and has EM 0.4; anti-refusal training
alone (AR SFT, AR RLOO and the equal-exposure doses) raises EM to 0.7 and leaves refusal at
0.1 in distribution, with residual OOD refusal 0.3 for AR SFT and RLOO; every mitigation
brings EM back to the base's 0.4; all other metrics (helpfulness...) are 0.4 everywhere.
AR SFT's values move by 0.002 on odd seeds, so that its differences have a spread.
"""

from __future__ import annotations

MITIGATED = ("ar_sdf", "ar_charq", "ar_charq_steer", "ar_rl_rloo_charq")


def full_world(variant: str, metric: str, seed: int) -> float:
    jitter = 0.002 * (seed % 2) if variant == "ar_sft" else 0.0
    trained = variant != "base"
    if metric == "em":
        return (0.7 if trained and variant not in MITIGATED else 0.4) + jitter
    if metric.startswith("refusal"):
        if not trained:
            return 0.9
        residual = metric == "refusal_ood" and variant in ("ar_sft", "ar_rl_rloo")
        return (0.3 if residual else 0.1) + jitter
    return 0.4
