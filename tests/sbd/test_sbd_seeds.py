"""Every seed of SBD's config reaches what it seeds: the test walks papers.sbd for keys
named like a seed (``degree_seeds`` is a count of start rows, not a seed), and for each one
the product it feeds changes when the seed changes. A new seed key fails until it is
listed here with its product."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import yaml

from repro.sbd.greedy import GreedyConfig, decompose
from repro.sbd.pipeline import planted_config
from repro.sbd.planted import PlantedConfig, plant
from repro.sbd.spmm_bench import compare
from tests.conftest import ROOT
from tests.seed_keys import seed_paths

SBD = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["sbd"]
NOT_SEEDS = {"degree_seeds"}  # rows of highest degree per round: a count


def _graph(spec, seed):
    A, _ = plant(planted_config(spec, seed=seed))
    return A


def _study_graph(name):
    cfg = SBD[name]
    point = {"deletion": cfg["deletions"][0], "background": cfg["backgrounds"][0]} if (
        name == "noise_study") else next(iter(cfg["settings"].values()))  # fmt: skip
    return lambda seed: _graph({**cfg["graph"], **point}, seed)


def _operand(seed):
    A, _ = plant(PlantedConfig(m=120, blocks=3, side_min=10, side_max=30, seed=1))
    dec = decompose(A, GreedyConfig())
    r = compare(A, dec, 8, device=torch.device("cpu"), warmup=0, repeats=1, seed=seed)
    return r["rel_error_sbd_scipy"], r["rel_error_csr"]


def _minhash(seed):
    """Min-hash starts only, on a noisy graph where the hash functions decide the factors."""
    A, _ = plant(PlantedConfig(m=300, blocks=20, side_min=5, side_max=20, deletion=0.2,
                               background=2e-3, seed=0))  # fmt: skip
    cfg = GreedyConfig(minhash_bands=2, minhash_rows=2, minhash_seed=seed, degree_seeds=0,
                       per_round=1)  # fmt: skip
    return decompose(A, cfg).cost


def _product(path):
    """The seed-dependent product of a seed key, as a function of the seed."""
    if path[0] == "datasets":
        return lambda seed: _graph(SBD["datasets"][path[1]], seed)
    if path in (("noise_study", "seeds"), ("sign_study", "seeds")):
        return _study_graph(path[0])
    if path == ("scaling_study", "graph", "seed"):
        cfg = SBD["scaling_study"]
        blocks = cfg["blocks"][0]
        graph = {**cfg["graph"], "blocks": blocks, "m": blocks * cfg["nodes_per_block"]}
        return lambda seed: _graph(graph, seed)
    return {("evaluation", "operand_seed"): _operand, ("greedy", "minhash_seed"): _minhash}[path]


def _same(a, b) -> bool:
    if hasattr(a, "nnz"):
        return a.shape == b.shape and (a != b).nnz == 0
    return np.array_equal(np.asarray(a), np.asarray(b))


def _value(config, path):
    for key in path:
        config = config[key]
    return config


SEED_KEYS = sorted(p for p in seed_paths(SBD) if p[-1] not in NOT_SEEDS)


def test_the_walk_finds_every_seed_key():
    planted = {name for name, spec in SBD["datasets"].items() if spec["kind"] == "planted"}
    assert {p[1] for p in SEED_KEYS if p[0] == "datasets"} == planted
    assert {p for p in SEED_KEYS if p[0] != "datasets"} == {
        ("noise_study", "seeds"), ("sign_study", "seeds"), ("scaling_study", "graph", "seed"),
        ("evaluation", "operand_seed"), ("greedy", "minhash_seed"),
    }  # fmt: skip


@pytest.mark.parametrize("path", SEED_KEYS, ids=".".join)
def test_changing_a_seed_changes_what_it_seeds(path):
    value = _value(SBD, path)
    seed = value[0] if isinstance(value, list) else value
    product = _product(path)
    assert _same(product(seed), product(seed))  # deterministic
    assert not _same(product(seed), product(seed + 1000))  # the lead's shifted seed set


def test_the_evaluation_step_takes_its_operand_from_the_config(tmp_path):
    """The same decompositions evaluated with operand_seed 0 and 1000: the factorised
    product's error (a function of X alone) differs, so the key reaches the timings."""
    from repro.sbd import pipeline
    from tests.sbd.test_sbd_cli import TEST_CONFIG, run_pipeline

    first = run_pipeline(tmp_path, "davis")
    sbd = yaml.safe_load(open(TEST_CONFIG))["papers"]["sbd"]
    methods = list(sbd["methods"])
    ev = {**sbd["evaluation"], "operand_seed": sbd["evaluation"]["operand_seed"] + 1000}
    pipeline.evaluate("davis", tmp_path / "davis.npz", methods,
                      [tmp_path / f"{m}.npz" for m in methods],
                      [tmp_path / f"{m}.json" for m in methods], ev, "cpu", 1,
                      tmp_path / "shifted.json")  # fmt: skip
    shifted = json.loads((tmp_path / "shifted.json").read_text())

    def errors(metrics):
        return [r["rel_error_sbd_scipy"] for r in metrics["methods"]["sbd"]["spmm"]]

    assert errors(first) != errors(shifted)
