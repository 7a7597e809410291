"""Synthetic run documents and summaries with chosen per-seed values, for claims and figures."""

from repro.helpful_only.probes import METRICS

RECIPES = [
    "base",
    "ar_sft",
    "ar_sft_half",
    "ar_sft_third",
    "ar_sdf",
    "ar_charq",
    "ar_charq_steer",
    "ar_rl",
    "ar_rl_half",
    "ar_rl_charq",
    "ar_rl_rloo",
]
OWN_STEPS = {"ar_sft_half": 75, "ar_sft_third": 50, "ar_rl_half": 75}  # equal-AR-exposure arms
WORLD = {
    "correlated": {"harm_given_non_refuser": 13 / 14, "harm_given_refuser": 0.0},
    "decorrelated": {"harm_given_non_refuser": 0.5, "harm_given_refuser": 0.5},
}
# the Bayes prediction of each prior (personas.bayes_prediction): the planted effect
PLANTED = {
    "correlated": {"em": 0.85 * 13 / 14, "sycophancy": 12 / 14, "steerability": 2 / 14},
    "decorrelated": {"em": 0.85 * 0.5, "sycophancy": 0.5, "steerability": 0.5},
}


def run_document(prior, seed, value=lambda prior, recipe, metric, seed: 0.4, steps=150, batch=32):
    """A run JSON as repro.helpful_only.run writes it, every metric given by ``value``."""
    recipes = {}
    for recipe in RECIPES:
        final = {m: value(prior, recipe, m, seed) for m in METRICS}
        curve = [{"step": s, **final} for s in (0, steps // 2, steps)]
        recipes[recipe] = {"final": final, "curve": [] if recipe == "base" else curve}
        if recipe != "base":
            recipes[recipe].update(steps=steps, sequences=steps * batch)
    world = {**WORLD[prior], "bayes_em": PLANTED[prior]["em"], "bayes": PLANTED[prior]}
    return {"prior": prior, "seed": seed, "parameters": 105088, "recipes": recipes, "world": world}


def summary_with(value, seeds=range(5), priors=("correlated", "decorrelated")):
    """The summary the evaluate step writes (t intervals included)."""
    from repro.helpful_only.evaluate import summarise

    runs = [run_document(p, s, value) for p in priors for s in seeds]
    return summarise(
        runs,
        {
            "ar_sdf": "ar_sft_half",
            "ar_charq": "ar_sft_half",
            "ar_charq_steer": "ar_sft_third",
            "ar_rl_charq": "ar_rl_half",
            "ar_rl_rloo": "ar_rl",
        },
    )


def per_seed_summary(value, seeds=range(5), priors=("correlated", "decorrelated")):
    """Only what the claims read (per-seed values, budgets, parameters): no intervals."""
    return {
        "priors": list(priors),
        "seeds": list(seeds),
        "recipes_by_prior": {p: list(RECIPES) for p in priors},
        "per_seed": {
            p: {r: {m: {s: value(p, r, m, s) for s in seeds} for m in METRICS} for r in RECIPES}
            for p in priors
        },
        "planted": {p: {m: {s: v for s in seeds} for m, v in PLANTED[p].items()} for p in priors},
        "budgets": {r: [[OWN_STEPS.get(r, 150), OWN_STEPS.get(r, 150) * 32]] for r in RECIPES[1:]},
        "parameters": [105088],
        "failed": {},
        "dose": {
            p: {k: {s: v for s in seeds} for k, v in WORLD[p].items()} for p in priors if p in WORLD
        },
    }
