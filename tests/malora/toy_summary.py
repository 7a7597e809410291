"""A hand-made MaLoRA summary (the layout of ``repro.malora.evaluate``) under which every
claim holds (``good``) or is contradicted (not ``good``), while every control of the config
behaves as a control should: the planted effects (closed forms, oracle, exact margins, best
baseline, an exactly aligned middle λ) are there in both, the nulls (λ against itself, the
reversed closed forms, the unmerged base, averaging, the worst rule, the equal-scale
setting, the smallest-λ reference) are not. ``sound=False`` breaks the runs instead
(unconverged adapters, an adapter that did not learn, a peft gap): the sanity checks fail."""

import numpy as np

LAMBDAS = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1]
RULES = [
    "task_arithmetic",
    "ta_tuned",
    "average",
    "ties",
    "dare",
    "knots_ties",
    "knots_dare",
    "lorahub",
    "malora",
    "malora_tuned_scale",
    "norm_frobenius",
    "base",
]
OVERLAPS = (0.0, 0.3, 0.6)
FINETUNE = [0.6, 0.55, 0.5, 0.4, 0.3]  # the trade-off: falls with λ (the closed forms' shape)


def stats(values):
    values = [float(v) for v in values]
    return {
        "mean": float(np.mean(values)),
        "sd": float(np.std(values, ddof=1)),
        "defined": len(values),
        "per_seed": values,
    }


def _sweep(good, sound, n, noisy):
    shape = [0.96, 0.99, 0.999, 0.97, 0.85] if good else [0.80, 0.84, 0.88, 0.90, 0.92]
    finetune = FINETUNE if good else FINETUNE[::-1]
    error = 1.01 if good else 1.5  # closed form / measured
    gap = 1e-9 if sound else 1e-2
    m0, n0 = 2.0, 3.0
    blocks = []
    for overlap in OVERLAPS:
        rows = []
        for i, lam in enumerate(LAMBDAS):
            norm = 3.0 - i * 0.5
            pretrain = m0 / np.hypot(n0, norm)  # the orthogonal identity, exact
            row = {"lambda": lam, "delta_norm": stats([norm] * n), "gap": stats([gap] * n)}
            for svm in ("frobenius", "nuclear"):
                row[f"cosine_{svm}"] = noisy(shape[i])
                row[f"closed_{svm}_finetune"] = stats([FINETUNE[i] * error] * n)
                row[f"closed_{svm}_pretrain"] = stats([pretrain * error] * n)
            row["cosine_path_smallest"] = noisy(1.0 - 0.03 * i)  # peaks at the smallest λ
            row["measured_finetune"] = stats([finetune[i]] * n)
            row["measured_pretrain"] = stats([pretrain] * n)
            rows.append(row)
        if not good:
            rows[0]["measured_pretrain"] = stats([-0.1] * n)
        blocks.append(
            {
                "overlap": overlap,
                "lambdas": rows,
                "base_margin": stats([m0] * n),
                "base_norm": stats([n0] * n),
                "base_gap": stats([gap] * n),
                "nuclear_svm_status": ["optimal"] * n,
            }
        )
    return blocks


def _union_margin(rule, good, setting) -> float:
    if setting == "equal":  # equal adapter scales: the rules tie (the brief's expectation)
        return 0.0 if rule == "base" else 0.25
    if rule == "malora":
        return 0.295 if good else 0.20
    return {"average": 0.15 if good else 0.25, "base": 0.0}.get(rule, 0.25)


def _linear(good, sound, n, noisy):
    gap = 1e-9 if sound else 1e-2
    settings = {}
    for setting in ("unequal", "equal"):
        blocks = []
        for overlap in OVERLAPS:
            methods = {
                rule: {
                    "union_margin": noisy(
                        _union_margin(rule, good, setting), 0.0005 if rule == "malora" else 0.005
                    ),
                    "min_task_margin": noisy(
                        {"malora": 1.0 if good else -0.5, "base": 0.0}.get(rule, 1.0),
                        0.0 if rule == "base" else 0.01,
                    ),
                    # the unmerged base is at chance on the fine-tuning heads (no rows there)
                    "pertask_accuracy": stats([0.2 if rule == "base" else 0.9] * n),
                }
                for rule in RULES
            }
            block = {
                "overlap": overlap,
                "methods": methods,
                "oracle": stats([0.3] * n),
                "adapter_gap": stats([gap] * n),
                "base_gap": stats([gap] * n),
                "alphas": {r: [[0.0 if r == "base" else 1.0] * 3] * n for r in RULES},
                "errors": {r: [None] * n for r in RULES},
                "calibration_evaluations": {
                    r: 20 if r in ("ta_tuned", "lorahub") else 0 for r in RULES
                },
            }
            if setting == "unequal":  # the primary setting: MaLoRA with exact margins
                block["ablations"] = {"calibration_size": {"test": stats([0.3] * n)}}
            blocks.append(block)
        settings[setting] = blocks
    return settings


def _digits(good, sound, seeds, noisy):
    n = len(seeds)
    gap = 0.05 if good else -0.05  # MaLoRA − the baselines

    def value(rule, level):
        if rule == "base":  # the unmerged base: below every merge (the worst rule)
            return noisy(level - 0.4)
        return noisy(level if rule.startswith("malora") else level - gap)

    methods = {
        r: {
            "normalised_accuracy": value(r, 0.95),
            "joint_accuracy": value(r, 0.8),
            "pertask_accuracy": stats([1 / 3 if r == "base" else 0.9] * n),
        }
        for r in RULES
    }
    return {
        "seeds": list(seeds),
        "methods": methods,
        "alphas": {r: [[0.0, 0.0] if r == "base" else [1.0, 1.0]] * n for r in RULES},
        "errors": {r: [None] * n for r in RULES},
        "pertask_chance": 1 / 3,
        "peft_cat_max_abs_logit_gap": 1e-6 if sound else 1e-2,
        "calibration_evaluations": {r: 0 for r in RULES},
        # per seed: the base on the pre-training digits, then each adapter on its task
        "individual_accuracy": [[0.99, 0.98, 0.97 if sound else 0.5]] * n,
    }


def toy_summary(good: bool, seeds=(0, 1, 2, 3, 4), *, sound: bool = True):
    """A summary under which every MaLoRA claim holds (good) or fails (not good); ``sound``
    False: broken runs that the sanity checks catch."""
    rng = np.random.default_rng(0)
    n = len(seeds)

    def noisy(value, scale=0.005):
        return stats(value + scale * rng.standard_normal(n))

    return {
        "sweep": {"seeds": list(seeds), "overlaps": _sweep(good, sound, n, noisy)},
        "linear": {"seeds": list(seeds), "settings": _linear(good, sound, n, noisy)},
        "digits": _digits(good, sound, seeds, noisy),
    }
