"""Prepare one end-to-end data set: a source and a target graph, saved to .npz.

Embedded data sets are CSBM settings (``shift``, ``n``, ``sigma``); each seed draws a new
pair of graphs, stored under ``s<seed>_<domain>_<field>`` because edge counts differ
between draws. Real pairs (full scale: e.g. MAG papers by country) are the same for every
seed and stored once under ``<domain>_<field>``, with ``<domain>_eval_mask`` when the loader
leaves nodes out of the accuracy (MAG's merged class).
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from repro.common.cli import log_to_stderr, paper_section, step_parser
from repro.common.io import read_npz, write_npz
from repro.plsa.csbm import Graph, sample_csbm, shift_setting
from repro.plsa.datasets import load_pyg_graph_file

log = logging.getLogger(__name__)

FIELDS = ("x", "y", "edge_index")


@dataclasses.dataclass(frozen=True)
class CSBMDataConfig:
    shift: str
    n: int
    sigma: float
    avg_degree: float = 10.0
    seeds: tuple[int, ...] = (0, 1, 2)


def prepare_csbm(cfg: CSBMDataConfig, output: str) -> None:
    arrays: dict[str, np.ndarray] = {"seeds": np.asarray(cfg.seeds)}
    for seed in cfg.seeds:
        rng = np.random.default_rng(seed)
        source_spec, target_spec = shift_setting(
            cfg.shift, n=cfg.n, sigma=cfg.sigma, avg_degree=cfg.avg_degree
        )
        for domain, spec in (("source", source_spec), ("target", target_spec)):
            graph = sample_csbm(spec, rng=rng)
            for field in FIELDS:
                arrays[f"s{seed}_{domain}_{field}"] = getattr(graph, field)
            log.info(
                "seed %d %s: %d nodes, %d directed edges",
                seed,
                domain,
                len(graph.y),
                graph.edge_index.shape[1],
            )
    write_npz(output, **arrays)


def prepare_real(
    source_file: str,
    target_file: str,
    seeds: tuple[int, ...],
    output: str,
    *,
    merged_class: int | None = None,
) -> None:
    """A pair of real graphs in PyG's saved format (MAG by country), shared by every seed;
    ``merged_class`` (MAG: 19) is trained on and left out of the accuracy."""
    arrays: dict[str, np.ndarray] = {"seeds": np.asarray(seeds)}
    for domain, path in (("source", source_file), ("target", target_file)):
        loaded = load_pyg_graph_file(path, merged_class=merged_class)
        for field in FIELDS:
            arrays[f"{domain}_{field}"] = getattr(loaded.graph, field)
        if loaded.graph.eval_mask is not None:
            arrays[f"{domain}_eval_mask"] = loaded.graph.eval_mask
        log.info(
            "%s %s: %d nodes, %d directed edges",
            domain,
            loaded.name,
            len(loaded.graph.y),
            loaded.graph.edge_index.shape[1],
        )
    write_npz(output, **arrays)


def load_pair(path: str, seed: int) -> tuple[Graph, Graph]:
    """The (source, target) graphs of one seed from a prepared .npz."""
    data = read_npz(path)
    prefix = f"s{seed}_" if f"s{seed}_source_x" in data else ""
    try:
        return tuple(
            Graph(
                **{f: data[f"{prefix}{domain}_{f}"] for f in FIELDS},
                eval_mask=data.get(f"{prefix}{domain}_eval_mask"),
            )
            for domain in ("source", "target")
        )
    except KeyError as err:
        raise ValueError(f"{path}: no graphs for seed {seed} ({err})") from err


def main(argv: list[str] | None = None) -> int:
    """Prepare one end-to-end data set of the config (rule plsa_prepare)."""
    p = step_parser(main.__doc__, paper="plsa")
    p.add_argument("dataset", help="a name under papers.plsa.end_to_end.datasets")
    p.add_argument("output", help="the .npz to write")
    p.add_argument("--source", help="the source graph file of a real pair")
    p.add_argument("--target", help="the target graph file of a real pair")
    args = p.parse_args(argv)
    log_to_stderr()
    section = paper_section(args.config, "plsa")
    spec = dict(section["end_to_end"]["datasets"][args.dataset])
    spec.pop("methods", None)  # which methods train on it: not a property of the data
    seeds = tuple(section["end_to_end"].get("seeds", (0, 1, 2)))
    if "source" in spec:
        if not (args.source and args.target):
            raise SystemExit(f"{args.dataset} is a real pair: give --source and --target files")
        merged = spec.get("merged_class")
        prepare_real(args.source, args.target, seeds, args.output, merged_class=merged)
    else:
        prepare_csbm(CSBMDataConfig(**spec, seeds=seeds), args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
