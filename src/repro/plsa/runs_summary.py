"""One data set's end-to-end runs gathered into its metrics (rule plsa_evaluate), without
torch: importing PyG and torch was all but the whole of the evaluate job's CPU (7-9 s a job
under load, for a few milliseconds of work).

The layout is shared by the papers: {dataset, seeds, methods: {method: {per_seed, mean,
std}}}, with the per-seed values of :data:`SUMMARY_KEYS`.
"""

from __future__ import annotations

from repro.common.io import read_json, write_json
from repro.common.summary import mean_std

# calibration of the predictor an estimator read, at its last re-estimation (reweight.py)
ECE_KEYS = ("node_ece_before", "node_ece_after", "pair_ece_before", "pair_ece_after")
SUMMARY_KEYS = (
    "target_accuracy",
    "constant_accuracy",  # the majority share of the target test nodes (repro.plsa.sanity)
    "source_val_accuracy",
    "pi_l1_error",
    *ECE_KEYS,
    "train_seconds",
)


def _row(result: dict) -> dict[str, float]:
    return {k: float(result[k]) for k in SUMMARY_KEYS if result.get(k) is not None}


def aggregate(dataset: str, run_paths: dict[str, str], output: str) -> dict:
    methods = {}
    seeds = None
    for method, path in run_paths.items():
        document = read_json(path)
        rows = [_row(r) for r in document["results"]]
        mean, std = mean_std(rows)
        methods[method] = {
            "per_seed": rows,
            "mean": mean,
            "std": std,
            "selection": document["results"][0].get("selection"),
            "training_provenance": document["provenance"],
        }
        if seeds is not None and document["seeds"] != seeds:
            raise ValueError(
                f"{path}: seeds {document['seeds']} differ from the other methods' {seeds}"
            )
        seeds = document["seeds"]
    result = {"dataset": dataset, "seeds": seeds, "methods": methods}
    write_json(output, result)
    return result
