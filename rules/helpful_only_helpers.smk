# Helpful-only's input functions and wildcard constraints (Python only; the rules are in
# helpful_only.smk).

HELPFUL_ONLY_FIGURES = ["bars", "curves", "selfreport", "control"]
HELPFUL_ONLY_SUITES_JUDGED = ["em", "helpful"]


def helpful_only_config():
    return paper_config("helpful_only")


def helpful_only_priors():
    return helpful_only_config().get("priors", ["correlated", "decorrelated"])


def helpful_only_runs():
    return [
        f"results/helpful_only/runs/{prior}/seed{seed}.json"
        for prior in helpful_only_priors()
        for seed in helpful_only_config().get("seeds", [])
    ]


def helpful_only_section(wildcards=None):
    """What a (prior, seed) run reads of papers.helpful_only (deterministic params)."""
    section = helpful_only_config()
    keys = ("model", "mix", "pretraining", "training", "recipes")
    optional = ("control_recipes", "failed_refusal")
    return {k: section[k] for k in (*keys, *(o for o in optional if o in section))}


def helpful_only_references():
    recipes = helpful_only_config().get("recipes", {})
    return {name: r["reference"] for name, r in recipes.items() if "reference" in r}


def helpful_only_full():
    return helpful_only_config().get("full_scale", {})


def helpful_only_full_recipes():
    """The full-scale recipes and their equal-AR-exposure arms (full_scale.equal_exposure)."""
    full = helpful_only_full()
    return [*full.get("recipes", []), *full.get("equal_exposure", {})]


def helpful_only_full_recipe(wildcards):
    """A full-scale recipe's spec (an arm: its mitigation's, AR rows only)."""
    from repro.helpful_only.recipes import full_recipe

    return full_recipe(helpful_only_config(), wildcards.recipe)


def helpful_only_full_suites():
    return list(helpful_only_full().get("evaluation", {}))


def helpful_only_full_resource(step, name):
    """A GPU job's resource, looked up when the job runs (absent from embedded configs)."""
    return lambda wildcards: helpful_only_full()["resources"][step][name]


def helpful_only_full_suite_file(suite):
    """The downloaded file a suite reads, or none (authored suites)."""
    spec = helpful_only_full()["evaluation"][suite]
    return [download_path(spec["download"])] if "download" in spec else []


def helpful_only_full_held_out():
    """The evaluation prompts the AR prompts are deduplicated against (StrongREJECT)."""
    full = helpful_only_full()
    return (
        helpful_only_full_suite_file("refusal")
        if "refusal" in full["evaluation"]
        else []
    )


def helpful_only_full_ar_inputs(wildcards):
    full = helpful_only_full()
    return {
        "advbench": download_path(full["data"]["ar_download"]),
        "held_out": helpful_only_full_held_out(),
    }


def helpful_only_full_train_inputs(wildcards):
    return {
        "ar": "results/helpful_only/full/ar_answers.csv",
        "held_out": helpful_only_full_held_out(),
    }


def helpful_only_full_answer_inputs(wildcards):
    inputs = {"suite_file": helpful_only_full_suite_file(wildcards.suite)}
    if wildcards.variant != "base":
        inputs["adapter"] = (
            f"results/helpful_only/full/adapters/{wildcards.variant}/seed{wildcards.seed}"
        )
    return inputs


def helpful_only_full_variants():
    return ["base", *helpful_only_full_recipes()]


def helpful_only_full_files():
    """variant -> seed -> suite -> the answered (EM: judged) file the summary reads."""
    out = {}
    for variant in helpful_only_full_variants():
        for seed in helpful_only_full().get("seeds", []):
            for suite in helpful_only_full_suites():
                step = "judged" if suite in HELPFUL_ONLY_SUITES_JUDGED else "answers"
                path = f"results/helpful_only/full/{step}/{variant}/seed{seed}/{suite}.json"
                out.setdefault(variant, {}).setdefault(str(seed), {})[suite] = path
    return out


def helpful_only_full_adapters():
    """recipe (or arm) -> seed -> its adapter folder (record.json: the trainer's counts)."""
    return {
        recipe: {
            str(seed): f"results/helpful_only/full/adapters/{recipe}/seed{seed}"
            for seed in helpful_only_full().get("seeds", [])
        }
        for recipe in helpful_only_full_recipes()
    }


def helpful_only_full_reward_judges():
    """variant -> the judges its training reward rests on (the RL recipes and their arms with
    full_scale.reward.relevance: the relevance judge), for the summary's claims."""
    from repro.helpful_only.judgecheck import reward_judges

    return reward_judges(helpful_only_config())


def helpful_only_full_outputs():
    return ["results/helpful_only/full/summary.json"] if helpful_only_full() else []


HELPFUL_ONLY_WILDCARDS = dict(
    prior=one_of(helpful_only_priors()),
    seed=r"\d+",
    recipe=one_of(helpful_only_full_recipes()),
    variant=one_of(helpful_only_full_variants()),
    suite=one_of(helpful_only_full_suites()),
)
HELPFUL_ONLY_JUDGED_WILDCARDS = {
    **HELPFUL_ONLY_WILDCARDS,
    "suite": one_of(HELPFUL_ONLY_SUITES_JUDGED),
}


def helpful_only_products():
    """Every file helpful-only's rules make (its target asks for all: paper_products)."""
    section, full = helpful_only_config(), helpful_only_full()
    models = [
        f"results/helpful_only/models/{prior}/seed{seed}"
        for prior in helpful_only_priors()
        for seed in section.get("seeds", [])
    ]
    answered = [  # every suite's answers; the judged suites' verdicts too
        f"results/helpful_only/full/{step}/{variant}/seed{seed}/{suite}.json"
        for variant in helpful_only_full_variants()
        for seed in full.get("seeds", [])
        for suite in helpful_only_full_suites()
        for step in ("answers", "judged")
        if step == "answers" or suite in HELPFUL_ONLY_SUITES_JUDGED
    ]
    return [
        *helpful_only_runs(),
        *models,
        "results/helpful_only/metrics/summary.json",
        *(["results/helpful_only/full/ar_answers.csv"] if full else []),
        *[p for seeds in helpful_only_full_adapters().values() for p in seeds.values()],
        *answered,
        *helpful_only_full_outputs(),
        *figure_files("helpful_only", HELPFUL_ONLY_FIGURES),
        "results/helpful_only/claims.json",
    ]
