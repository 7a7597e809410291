"""Studies without per-file rules: recovery vs noise, signed vs unsigned by cause, and
decomposition time vs edges; and the noise study's oracles (:mod:`repro.sbd.oracles`) on
the same graphs, for the claims' controls."""

from __future__ import annotations

import dataclasses
import itertools
import logging
import time

from repro.common.cli import log_to_stderr, paper_section, step_parser
from repro.common.io import write_json
from repro.common.provenance import RunRecorder
from repro.sbd.greedy import GreedyConfig, decompose
from repro.sbd.oracles import oracle_metrics, oracle_truth
from repro.sbd.planted import PlantedConfig, plant
from repro.sbd.recovery import recovery_metrics

log = logging.getLogger(__name__)


def _decompose(A, truth, greedy: dict, method: dict, seed: int) -> dict:
    """One method on one planted graph: CF, sizes, time, exactness and recovery."""
    start = time.perf_counter()
    dec = decompose(A, GreedyConfig(**{**greedy, **method, "minhash_seed": seed}))
    seconds = time.perf_counter() - start
    return {
        "nnz": int(A.nnz),
        "cf": dec.compression_factor,
        "rank": dec.rank,
        "residual_nnz": int(dec.residual.nnz),
        "seconds": seconds,
        "mismatched_cells": int((dec.to_sparse() != A).nnz),  # a broken run is not a result
        **recovery_metrics(truth, {"rows": dec.rows, "cols": dec.cols, "signs": dec.signs}),
    }


def _study(cfg: dict, methods: dict, greedy: dict, points, output) -> None:
    """Every method of ``cfg["methods"]`` on the planted graph of every point (labels,
    planted spec); all methods see the same graphs, seed by seed."""
    rows = []
    with RunRecorder(config={"study": cfg, "methods": methods, "greedy": greedy}) as run:
        for labels, spec in points:
            A, truth = plant(PlantedConfig(**spec))
            for name in cfg["methods"]:
                row = {**labels, "method": name}
                row |= _decompose(A, truth, greedy, methods[name], spec["seed"])
                log.info("%s", row)
                rows.append(row)
    write_json(output, {"rows": rows, "provenance": run.provenance()})


def _noise_points(cfg: dict):
    grid = itertools.product(cfg["deletions"], cfg["backgrounds"], cfg["seeds"])
    return (
        ({"deletion": d, "background": b, "seed": seed},
         {**cfg["graph"], "deletion": d, "background": b, "seed": seed})
        for d, b, seed in grid
    )  # fmt: skip


def noise_study(cfg: dict, methods: dict, greedy: dict, output) -> None:
    """Deletion × background grid × seeds."""
    _study(cfg, methods, greedy, _noise_points(cfg), output)


def noise_oracles(cfg: dict, output) -> None:
    """The oracles ``cfg["oracles"]`` (:mod:`repro.sbd.oracles`) on the noise study's graphs,
    one row per (deletion, background, seed, oracle) in the layout of the methods' rows."""
    rows = []
    with RunRecorder(config={"study": cfg}) as run:
        for labels, spec in _noise_points(cfg):
            A, truth = plant(PlantedConfig(**spec))
            for name in cfg.get("oracles", []):
                found = oracle_truth(name, truth, spec["deletion"])
                rows.append({**labels, "method": name, **oracle_metrics(A, truth, found)})
    write_json(output, {"rows": rows, "provenance": run.provenance()})


def sign_study(cfg: dict, methods: dict, greedy: dict, output) -> None:
    """Signed vs unsigned on planted settings that each isolate one cause (nested negative
    blocks without deletions, deletions without nested blocks, ...) × seeds, with the same
    greedy settings and candidate starts for every method."""
    points = (
        ({"setting": name, "seed": seed}, {**cfg["graph"], **cfg["settings"][name], "seed": seed})
        for name, seed in itertools.product(cfg["settings"], cfg["seeds"])
    )
    _study(cfg, methods, greedy, points, output)


def scaling_study(cfg: dict, methods: dict, greedy: dict, output) -> None:
    """Time of the min-hash greedy vs number of edges (blocks grow with the graph)."""
    rows = []
    gcfg = GreedyConfig(**{**greedy, **methods[cfg["method"]]})
    with RunRecorder(config={"study": cfg, "greedy": dataclasses.asdict(gcfg)}) as run:
        for blocks in cfg["blocks"]:
            graph = {**cfg["graph"], "blocks": blocks, "m": blocks * cfg["nodes_per_block"]}
            A, _ = plant(PlantedConfig(**graph))
            start = time.perf_counter()
            dec = decompose(A, gcfg)
            seconds = time.perf_counter() - start
            row = {
                "blocks": blocks,
                "nodes": graph["m"],
                "edges": int(A.nnz),
                "seconds": seconds,
                "rank": dec.rank,
                "rounds": dec.trace[-1]["round"] + 1 if dec.trace else 0,
                "cf": dec.compression_factor,
            }
            log.info("%s", row)
            rows.append(row)
    write_json(output, {"rows": rows, "provenance": run.provenance()})


def main(argv: list[str] | None = None) -> None:
    p = step_parser("Run one of SBD's studies (all its methods, or one of them).", paper="sbd")
    p.add_argument("study", choices=["noise_study", "noise_oracles", "sign_study", "scaling_study"])
    p.add_argument("output", help=".json out")
    p.add_argument("--method", help="only this method (the workflow runs one job per method)")
    a = p.parse_args(argv)
    log_to_stderr()
    sbd = paper_section(a.config, "sbd")
    if a.study == "noise_oracles":
        noise_oracles(sbd["noise_study"], a.output)
        return
    cfg = dict(sbd[a.study])
    greedy = {**sbd.get("greedy", {}), **cfg.pop("greedy", {})}
    if a.method:
        cfg["methods"] = [a.method]
    globals()[a.study](cfg, sbd["methods"], greedy, a.output)


if __name__ == "__main__":
    main()
