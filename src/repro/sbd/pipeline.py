"""Prepare a graph, decompose it with one method, evaluate every method on it."""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch

from repro.common.cli import log_to_stderr, paper_section, step_parser
from repro.common.device import select_device
from repro.common.io import read_json, read_npz, write_json, write_npz
from repro.common.provenance import RunRecorder
from repro.common.seeding import set_threads
from repro.sbd import graphs
from repro.sbd.baselines import svd_at_budget
from repro.sbd.factors import Decomposition
from repro.sbd.greedy import GreedyConfig, decompose
from repro.sbd.oracles import PLANTED_TRUTH, oracle_metrics
from repro.sbd.planted import PlantedConfig, plant
from repro.sbd.recovery import recovery_metrics
from repro.sbd.spmm_bench import compare

log = logging.getLogger(__name__)


def planted_config(spec: dict, **override) -> PlantedConfig:
    fields = {f.name for f in dataclasses.fields(PlantedConfig)}
    return PlantedConfig(**{k: v for k, v in {**spec, **override}.items() if k in fields})


def _save_graph(path, A: sp.csr_matrix, truth: dict | None) -> None:
    arrays = {
        "shape": np.asarray(A.shape),
        "indptr": A.indptr,
        "indices": A.indices,
        "data": A.data,
    }
    if truth is not None:  # (a graph planted without blocks has an empty truth)
        empty = [np.zeros(0, dtype=np.int64)]
        arrays["truth_row_ptr"] = np.cumsum([0] + [len(u) for u in truth["rows"]])
        arrays["truth_rows"] = np.concatenate(empty + list(truth["rows"]))
        arrays["truth_col_ptr"] = np.cumsum([0] + [len(v) for v in truth["cols"]])
        arrays["truth_cols"] = np.concatenate(empty + list(truth["cols"]))
        arrays["truth_signs"] = truth["signs"]
    write_npz(path, **arrays)


def load_graph(path) -> tuple[sp.csr_matrix, dict | None]:
    z = read_npz(path)
    A = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    if "truth_signs" not in z:
        return A, None

    def split(ptr, idx):
        return [idx[ptr[k] : ptr[k + 1]] for k in range(len(ptr) - 1)]

    return A, {
        "rows": split(z["truth_row_ptr"], z["truth_rows"]),
        "cols": split(z["truth_col_ptr"], z["truth_cols"]),
        "signs": z["truth_signs"],
    }


def prepare(name: str, spec: dict, output, raw=None) -> None:
    """A data set's matrix (and planted truth) from its config entry."""
    if spec["kind"] == "planted":
        A, truth = plant(planted_config(spec))
    elif spec["kind"] == "bundled":
        A, truth = graphs.BUNDLED[name](), None
    else:
        A, truth = graphs.load(spec["format"], raw, symmetrize=spec["symmetrize"]), None
    log.info("%s: %s, nnz %d", name, A.shape, A.nnz)
    _save_graph(output, A, truth)


def run_decomposition(data, method: dict, greedy: dict, output_npz, output_json) -> None:
    A, _ = load_graph(data)
    cfg = GreedyConfig(**{**greedy, **method})
    with RunRecorder(config=dataclasses.asdict(cfg)) as run:
        start = time.perf_counter()
        dec = decompose(A, cfg)
        seconds = time.perf_counter() - start
    dec.save(output_npz)
    log.info("rank %d, cost %d of nnz %d, %.2f s", dec.rank, dec.cost, A.nnz, seconds)
    write_json(
        output_json,
        {"seconds": seconds, "trace": dec.trace, "provenance": run.provenance()},
    )


def _method_metrics(A, truth, dec: Decomposition, info: dict, ev: dict, device) -> dict:
    out = {
        **dec.sizes(A),
        "decompose_seconds": info["seconds"],
        "trace": info["trace"],
        **svd_at_budget(A, dec.cost),
    }
    if truth is not None and len(truth["rows"]):  # (a random graph has no blocks to recover)
        found = {"rows": dec.rows, "cols": dec.cols, "signs": dec.signs}
        out["recovery"] = recovery_metrics(truth, found)
    out["spmm"] = [
        compare(
            A,
            dec,
            d,
            device=device,
            warmup=ev["warmup"],
            repeats=ev["repeats"],
            cpu_repeats=ev.get("cpu_repeats"),
            seed=ev["operand_seed"],
        )
        for d in ev["dims"]
    ]
    return out


def evaluate(
    dataset, data, methods: dict, decompositions, infos, ev: dict, device, threads, output
):
    """Per method: sizes, CF, exactness, recovery, SVD at equal budget, SpMM timings; on a
    planted graph also the planted truth's own CF (``planted_truth``, the claims' control)."""
    set_threads(threads)
    device = select_device(device)
    A, truth = load_graph(data)
    with RunRecorder(config=ev, device=device) as run:
        per_method = {
            m: _method_metrics(A, truth, Decomposition.load(npz), read_json(js), ev, device)
            for m, npz, js in zip(methods, decompositions, infos, strict=True)
        }
    oracle = {} if truth is None else {PLANTED_TRUTH: oracle_metrics(A, truth, truth)}
    write_json(
        output,
        {
            "dataset": dataset,
            "methods": per_method,
            **oracle,
            "torch_threads": torch.get_num_threads(),
            "provenance": run.provenance(),
        },
    )


def main(argv: list[str] | None = None) -> None:
    p = step_parser(
        "Prepare a graph, decompose it with one method, or evaluate every method.", paper="sbd"
    )
    steps = p.add_subparsers(dest="step", required=True)
    prep = steps.add_parser("prepare", help="a data set's matrix (and planted truth)")
    prep.add_argument("dataset")
    prep.add_argument("output", help=".npz")
    prep.add_argument("--raw", help="the downloaded file of a full-scale graph")
    dec = steps.add_parser("decompose", help="one method's greedy SBD of a prepared matrix")
    dec.add_argument("data", help=".npz from prepare")
    dec.add_argument("method")
    dec.add_argument("factors", help=".npz out")
    dec.add_argument("info", help=".json out (seconds, trace)")
    ev = steps.add_parser("evaluate", help="CF, exactness, recovery, SVD, SpMM of every method")
    ev.add_argument("dataset")
    ev.add_argument("data", help=".npz from prepare")
    ev.add_argument("decompositions", help="folder with <method>.npz and <method>.json")
    ev.add_argument("output", help=".json out")
    ev.add_argument("--device", default="auto")
    ev.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    log_to_stderr()
    sbd = paper_section(a.config, "sbd")
    if a.step == "prepare":
        prepare(a.dataset, sbd["datasets"][a.dataset], a.output, a.raw)
    elif a.step == "decompose":
        run_decomposition(
            a.data, sbd["methods"][a.method], sbd.get("greedy", {}), a.factors, a.info
        )
    else:
        methods = list(sbd["datasets"][a.dataset].get("methods", sbd["methods"]))
        folder = Path(a.decompositions)
        evaluate(a.dataset, a.data, methods, [folder / f"{m}.npz" for m in methods],
                 [folder / f"{m}.json" for m in methods], sbd["evaluation"], a.device,
                 a.threads, a.output)  # fmt: skip


if __name__ == "__main__":
    main()
