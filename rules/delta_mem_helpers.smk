# δ-Mem's input functions and wildcard constraints (Python only; the rules are in
# delta_mem.smk).


def delta_mem_config():
    return paper_config("delta_mem")


def delta_mem_methods():
    return list(delta_mem_config().get("methods", {}))


DELTA_MEM_WILDCARDS = dict(method=one_of(delta_mem_methods()))


def delta_mem_seeds(method):
    spec = delta_mem_config()["methods"][method]
    return spec.get("seeds", delta_mem_config()["seeds"])


def delta_mem_runs(wildcards):
    """Backbones and their records, trained weights and run records of a method, one per
    seed (zipped)."""
    seeds = delta_mem_seeds(wildcards.method)
    path = f"results/delta_mem/{{}}/{wildcards.method}/seed{{}}.{{}}"
    return {
        "backbones": [f"results/delta_mem/backbone/seed{s}.pt" for s in seeds],
        "backbone_records": [f"results/delta_mem/backbone/seed{s}.json" for s in seeds],
        "models": [path.format("models", s, "pt") for s in seeds],
        "records": [path.format("runs", s, "json") for s in seeds],
    }


def delta_mem_metrics(methods=None):
    methods = delta_mem_methods() if methods is None else methods
    return [f"results/delta_mem/metrics/{m}.json" for m in methods]


def delta_mem_figure_methods(*roles):
    """Methods named under papers.delta_mem.figures (main, baseline)."""
    return [delta_mem_config()["figures"][role] for role in roles]


def delta_mem_full():
    return delta_mem_config().get("full_scale", {})


def delta_mem_full_resource(step, name):
    """A full-scale resource, looked up when a job needs it (absent from embedded configs)."""
    return lambda wildcards: delta_mem_full()["resources"][step][name]


def delta_mem_full_param(key):
    return lambda wildcards: delta_mem_full()[key]


def delta_mem_full_backbones():
    return list(delta_mem_full().get("backbones", {}))


def delta_mem_full_training():
    return {k: v for k, v in delta_mem_full()["training"].items() if k != "download"}


def delta_mem_full_adapter(wildcards):
    """base: none (δ-Mem with zero heads is the base model); released: the hub repo id."""
    if wildcards.adapter == "trained":
        return f"results/delta_mem/full/adapters/{wildcards.backbone}.safetensors"
    if wildcards.adapter == "released":
        return delta_mem_full()["backbones"][wildcards.backbone]["released_adapter"]
    return None


def delta_mem_full_locomo_inputs(wildcards):
    inputs = {"locomo": download_path(delta_mem_full()["locomo"]["download"])}
    if wildcards.adapter == "trained":
        inputs["adapter"] = delta_mem_full_adapter(wildcards)
    return inputs


DELTA_MEM_FULL_CONDITIONS = (
    "truncated",
    "state_only",
    "history_replay",
    "official_prompt",
)


def delta_mem_full_conditions(adapter):
    """The base adapter (zero heads: the base model) runs the conditions without a written
    state, where it differs from its truncated self; adapters those with one."""
    if adapter == "base":
        return ["truncated", "history_replay", "official_prompt"]
    return ["state_only", "history_replay", "official_prompt"]


def _delta_mem_full_jobs(backbone):
    """(adapter, condition, conversation) of every LoCoMo job of a backbone."""
    spec, locomo = delta_mem_full()["backbones"][backbone], delta_mem_full()["locomo"]
    jobs = []
    for adapter in spec["adapters"]:
        for condition in delta_mem_full_conditions(adapter):
            jobs += [(adapter, condition, c) for c in range(locomo["conversations"])]
    return jobs


def delta_mem_full_locomo_shards(wildcards):
    return [
        f"results/delta_mem/full/locomo/{wildcards.backbone}/{a}/{c}/conv{i}.json"
        for a, c, i in _delta_mem_full_jobs(wildcards.backbone)
    ]


def delta_mem_full_locomo_labels(wildcards):
    return [f"{a}/{c}" for a, c, _ in _delta_mem_full_jobs(wildcards.backbone)]


def delta_mem_full_mab_inputs(wildcards):
    mab = delta_mem_full()["memoryagentbench"]
    inputs = {"parquet": download_path(mab["splits"][wildcards.split]["download"])}
    if wildcards.adapter == "trained":
        inputs["adapter"] = delta_mem_full_adapter(wildcards)
    return inputs


def _delta_mem_full_mab_jobs(backbone):
    """(adapter, condition, split, shard) of every MemoryAgentBench job of a backbone."""
    spec = delta_mem_full()["backbones"][backbone]
    splits = delta_mem_full()["memoryagentbench"]["splits"]
    jobs = []
    for adapter in spec["adapters"]:
        for condition in delta_mem_full_conditions(adapter):
            for split, part in splits.items():
                jobs += [(adapter, condition, split, i) for i in range(part["shards"])]
    return jobs


def delta_mem_full_mab_shards(wildcards):
    return [
        f"results/delta_mem/full/mab/{wildcards.backbone}/{a}/{c}/{s}/shard{i}.json"
        for a, c, s, i in _delta_mem_full_mab_jobs(wildcards.backbone)
    ]


def delta_mem_full_mab_labels(wildcards):
    return [f"{a}/{c}" for a, c, _, _ in _delta_mem_full_mab_jobs(wildcards.backbone)]


def delta_mem_full_mab_backbones():
    """Full-scale backbones evaluated on MemoryAgentBench (none without that config key)."""
    return delta_mem_full_backbones() if "memoryagentbench" in delta_mem_full() else []


def delta_mem_variants():
    """The δ-Mem methods (not the LoRA baseline): the ablation figure compares them."""
    methods = delta_mem_config().get("methods", {})
    return [m for m, s in methods.items() if s["kind"] != "lora"]


DELTA_MEM_FIGURES = ["accuracy_vs_facts", "gain_ratios", "ablations", "cost"]


def delta_mem_products():
    """Every file δ-Mem's rules make (its target asks for all: paper_products)."""
    methods = delta_mem_methods()
    runs = [delta_mem_runs(wildcards_of(method=m)) for m in methods]
    backbones = {b for r in runs for b in r["backbones"]}
    full = [
        path
        for b in delta_mem_full_backbones()
        for path in (
            f"results/delta_mem/full/adapters/{b}.safetensors",
            f"results/delta_mem/full/adapters/{b}.json",
            *delta_mem_full_locomo_shards(wildcards_of(backbone=b)),
            f"results/delta_mem/full/locomo/{b}.json",
        )
    ] + [
        path
        for b in delta_mem_full_mab_backbones()
        for path in (
            *delta_mem_full_mab_shards(wildcards_of(backbone=b)),
            f"results/delta_mem/full/mab/{b}.json",
        )
    ]
    return [
        *[f for b in sorted(backbones) for f in (b, b.replace(".pt", ".json"))],
        *[f for r in runs for f in (*r["models"], *r["records"])],
        *delta_mem_metrics(),
        "results/delta_mem/cost/cost.json",
        *full,
        *figure_files("delta_mem", DELTA_MEM_FIGURES),
        "results/delta_mem/claims.json",
    ]
