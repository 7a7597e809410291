# Python helpers only (no rules): config validation, lookups, input functions.
import os
import sys
import urllib.parse
from pathlib import Path

from snakemake.utils import validate

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
from repro.common.device import visible_gpu_count  # noqa: E402
from repro.qsurv.configcheck import check as check_qsurv_config  # noqa: E402
from repro.plsa.configcheck import check as check_plsa_config  # noqa: E402
from repro.sbd.configcheck import check as check_sbd_config  # noqa: E402
from repro.delta_mem.configcheck import check as check_delta_mem_config  # noqa: E402

validate(config, "../workflow/schemas/config.schema.yaml")
check_qsurv_config(config)
check_plsa_config(config)
check_sbd_config(config)
check_delta_mem_config(config)

PAPERS = ("qsurv", "plsa", "sbd", "delta_mem")


def plsa_config():
    return config["papers"].get("plsa", {})


def plsa_datasets():
    return list(plsa_config().get("end_to_end", {}).get("datasets", {}))


def plsa_methods():
    return list(plsa_config().get("end_to_end", {}).get("methods", []))


def all_datasets():
    """Every paper's data set names: the {dataset} wildcard matches exactly these."""
    return qsurv_datasets() + plsa_datasets() + sbd_datasets() + delta_mem_datasets()


def all_methods():
    return (
        list(config["papers"].get("qsurv", {}).get("methods", {}))
        + plsa_methods()
        + sbd_methods()
        + delta_mem_methods()
    )


def qsurv_datasets():
    q = config["papers"].get("qsurv", {})
    return list(q.get("synthetic", {}).get("scenarios", [])) + list(
        q.get("real_datasets", {})
    )


def _one_of(names):
    """A wildcard pattern matching exactly the configured names (reserved names: configcheck)."""
    return "|".join(sorted(list(names), key=len, reverse=True)) or "(?!)"


def enabled_papers():
    return [p for p in PAPERS if config["papers"].get(p, {}).get("enabled", False)]


def paper_targets():
    return [f"results/{paper}/claims.json" for paper in enabled_papers()]


def download_path(name):
    """The path of ``downloads.<name>`` after download (named after the URL)."""
    path = urllib.parse.urlparse(config["downloads"][name]["url"]).path
    return f"results/downloads/{name}/{os.path.basename(path.rstrip('/'))}"


# One GPU job per visible GPU on a local run, without extra flags. The limit is set only
# when the user gave none, only for local execution (a SLURM node has its own GPUs), and
# only when a GPU is visible (on CPU-only machines "GPU" rules run in parallel on the CPU).
if workflow.local_exec and "gpu" not in workflow.global_resources:
    _gpus = visible_gpu_count()
    if _gpus:
        workflow.register_resource("gpu", _gpus)


# --- QSurv -------------------------------------------------------------------------------
def qsurv_config():
    return config["papers"].get("qsurv", {})


def qsurv_synthetic():
    return list(qsurv_config().get("synthetic", {}).get("scenarios", []))


def qsurv_methods(dataset):
    key = "synthetic_methods" if dataset in qsurv_synthetic() else "real_methods"
    return qsurv_config()[key]


def qsurv_source(dataset):
    if dataset in qsurv_synthetic():
        return "synthetic"
    return qsurv_config()["real_datasets"][dataset]["source"]


def qsurv_raw_input(wildcards):
    spec = qsurv_config()["real_datasets"].get(wildcards.dataset, {})
    return [download_path(spec["download"])] if "download" in spec else []


def qsurv_prepare_params(wildcards):
    q = qsurv_config()
    return {
        "dataset": wildcards.dataset,
        "source": qsurv_source(wildcards.dataset),
        "seeds": q["seeds"],
        "fractions": q["split"],
        "n_samples": q["synthetic"]["n_samples"],
        "censoring_rate": q["synthetic"]["censoring_rate"],
        "prediction_grid_points": q["evaluation"]["prediction_grid_points"],
        "truth_grid_points": q["evaluation"]["truth_grid_points"],
        "truth_quantile": q["evaluation"]["truth_quantile"],
    }


def qsurv_predictions(wildcards):
    """One file per method, in the order of qsurv_methods (the scripts zip them)."""
    return [
        f"results/qsurv/predictions/{wildcards.dataset}/{m}.npz"
        for m in qsurv_methods(wildcards.dataset)
    ]


def qsurv_train_logs(wildcards):
    return [
        f"results/qsurv/models/{wildcards.dataset}/{m}.json"
        for m in qsurv_methods(wildcards.dataset)
    ]


def qsurv_metrics(datasets):
    return [f"results/qsurv/metrics/{d}.json" for d in datasets]


# --- PLSA --------------------------------------------------------------------------------
def plsa_runs(wildcards):
    """One file per method, in the order of plsa_methods (the script zips them)."""
    return [f"results/plsa/runs/{wildcards.dataset}/{m}.json" for m in plsa_methods()]


def plsa_dataset(name):
    return plsa_config()["end_to_end"]["datasets"][name]


def plsa_raw_inputs(wildcards):
    """Downloaded source and target graphs of a real pair; nothing for CSBM settings."""
    spec = plsa_dataset(wildcards.dataset)
    if "source" not in spec:
        return {}
    return {
        "source": download_path(spec["source"]),
        "target": download_path(spec["target"]),
    }


def plsa_metrics():
    return [f"results/plsa/metrics/{d}.json" for d in plsa_datasets()]


# --- SBD ---------------------------------------------------------------------------------
def sbd_config():
    return config["papers"].get("sbd", {})


def sbd_datasets():
    return list(sbd_config().get("datasets", {}))


def sbd_methods():
    return list(sbd_config().get("methods", {}))


def sbd_raw_input(wildcards):
    """The downloaded file of a full-scale graph; nothing for planted or bundled ones."""
    spec = sbd_config()["datasets"][wildcards.dataset]
    if spec["kind"] != "download":
        return {}
    return {"raw": download_path(spec["download"])}


def sbd_decompositions(suffix):
    """One file per method, in the order of sbd_methods (the script zips them)."""
    return lambda wildcards: [
        f"results/sbd/decompositions/{wildcards.dataset}/{m}.{suffix}"
        for m in sbd_methods()
    ]


def sbd_metrics():
    return [f"results/sbd/metrics/{d}.json" for d in sbd_datasets()]


# --- δ-Mem -------------------------------------------------------------------------------
def delta_mem_config():
    return config["papers"].get("delta_mem", {})


def delta_mem_datasets():
    return []


def delta_mem_methods():
    return list(delta_mem_config().get("methods", {}))


def delta_mem_seeds(method):
    spec = delta_mem_config()["methods"][method]
    return spec.get("seeds", delta_mem_config()["seeds"])


def delta_mem_runs(wildcards):
    """Backbones, trained weights and run records of a method, one per seed (zipped)."""
    seeds = delta_mem_seeds(wildcards.method)
    path = f"results/delta_mem/{{}}/{wildcards.method}/seed{{}}.{{}}"
    return {
        "backbones": [f"results/delta_mem/backbone/seed{s}.pt" for s in seeds],
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
    """base: none (zero-initialised δ-Mem is the base model); released: the hub repo id."""
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


def _delta_mem_full_jobs(backbone):
    """(adapter, condition, conversation) of every LoCoMo job of a backbone."""
    spec, locomo = delta_mem_full()["backbones"][backbone], delta_mem_full()["locomo"]
    jobs = []
    for adapter in spec["adapters"]:
        base = adapter == "base"
        conditions = ["truncated", "full"] if base else ["state_only", "full_state"]
        for condition in conditions:
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
        base = adapter == "base"
        conditions = ["truncated", "full"] if base else ["state_only", "full_state"]
        for condition in conditions:
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
