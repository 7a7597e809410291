"""End-to-end runs: train one method on every seed of a prepared data set, then aggregate.

``train_method`` writes one JSON per (data set, method) with every seed's result, and
``train_methods`` does so for several methods in one process (the workflow's job per data
set: a method's training takes about as long as importing PyG, 4 s, on the embedded data);
``aggregate`` (:mod:`repro.plsa.runs_summary`, which the evaluate job imports without torch)
summarises all methods of a data set into the metrics layout shared by the papers:
{dataset, seeds, methods: {method: {per_seed, mean, std}}}.
"""

from __future__ import annotations

import logging
from pathlib import Path

from repro.common.cli import log_to_stderr, paper_section, step_parser
from repro.common.device import select_device
from repro.common.io import read_npz, write_json
from repro.common.provenance import RunRecorder
from repro.common.seeding import set_threads
from repro.plsa.prepare import load_pair
from repro.plsa.runs_summary import aggregate
from repro.plsa.train import TrainConfig, run

log = logging.getLogger(__name__)


def train_method(
    method: str,
    training: dict,
    data_path: str,
    output: str,
    *,
    device: str = "auto",
    threads: int = 1,
) -> dict:
    set_threads(threads)
    seeds = [int(s) for s in read_npz(data_path)["seeds"]]
    results = []
    with RunRecorder(
        config={"method": method, **training}, device=select_device(device), seed=seeds
    ) as recorder:
        for seed in seeds:
            source, target = load_pair(data_path, seed)
            cfg = TrainConfig(method=method, seed=seed, device=device, **training)
            results.append(run(cfg, source, target))
            log.info(
                "%s seed %d: target accuracy %.4f", method, seed, results[-1]["target_accuracy"]
            )
    document = {
        "method": method,
        "seeds": seeds,
        "results": results,
        "provenance": recorder.provenance(),
    }
    write_json(output, document)
    return document


def train_methods(
    methods: list[str],
    training: dict,
    data_path: str,
    output_dir: str,
    *,
    device: str = "auto",
    threads: int = 1,
) -> None:
    """``train_method`` for each method in turn, writing ``<output_dir>/<method>.json``."""
    Path(output_dir).mkdir(parents=True, exist_ok=True)
    for method in methods:
        output = str(Path(output_dir) / f"{method}.json")
        train_method(method, training, data_path, output, device=device, threads=threads)


def main(argv: list[str] | None = None) -> int:
    """Train one method on every seed of a prepared data set (rule plsa_train), or gather
    the methods' runs of one data set into its metrics (rule plsa_evaluate)."""
    p = step_parser(main.__doc__, paper="plsa", required=False)
    steps = p.add_subparsers(dest="step", required=True)
    train = steps.add_parser("train", help="one method, every seed")
    train.add_argument("method")
    train.add_argument("data", help="the data set's .npz (plsa.prepare)")
    train.add_argument("output", help="the run .json to write")
    train.add_argument("--device", default="cpu")
    evaluate = steps.add_parser("evaluate", help="every method's run of one data set")
    evaluate.add_argument("dataset")
    evaluate.add_argument("output", help="the metrics .json to write")
    evaluate.add_argument("runs", nargs="+", metavar="METHOD=RUN", help="method=run .json")
    args = p.parse_args(argv)
    log_to_stderr()
    if args.step == "train":
        training = dict(paper_section(args.config, "plsa")["end_to_end"].get("training", {}))
        train_method(args.method, training, args.data, args.output, device=args.device)
    else:
        aggregate(args.dataset, dict(run.split("=", 1) for run in args.runs), args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
