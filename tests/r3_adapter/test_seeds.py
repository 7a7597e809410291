"""Every seed of 3R-Adapter's embedded config reaches what it seeds: the test walks
papers.r3_adapter for keys named like a seed, and for each one the product it feeds changes
when the seed changes (the scene sets, the adaptation's batches and initialisation, the
pretraining stream, the colour cast). A new seed key fails until it is listed here."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
import torch
import yaml

from repro.r3_adapter.data import SplitConfig, make_splits, split_from_arrays
from repro.r3_adapter.pretrain import PretrainConfig, model_config, pretrain
from repro.r3_adapter.scenes import SceneConfig
from repro.r3_adapter.shift import LowLight
from repro.r3_adapter.train import AdaptConfig, adapt, fresh_adapted
from tests.conftest import ROOT
from tests.seed_keys import seed_paths

SECTION = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["r3_adapter"]
SCENE = SceneConfig(**{**SECTION["scene"], "grid": 4})  # small scenes, the same generator
SHIFT = LowLight(**SECTION["low_light"])
SPLIT = SplitConfig(fewshot=8, validation=4, test=4, adapt_severity=2)
MODEL = {"dim": 16, "heads": 2, "depth": 1, "mlp_ratio": 2.0}


def _splits(seed):
    return make_splits(SCENE, SHIFT, SPLIT, seed)["test/severity2/obs2"]


@functools.cache
def _backbone():
    """A one-step backbone and a fixed few-shot set, shared by every adaptation below."""
    model, _ = pretrain(model_config(SCENE, MODEL), SCENE, SHIFT,
                        PretrainConfig(steps=1, batch_size=4), torch.device("cpu"))  # fmt: skip
    return model.state_dict(), split_from_arrays(make_splits(SCENE, SHIFT, SPLIT, 0), "fewshot")


def _adaptation(seed):
    """Two steps of LoRA on a fixed few-shot set: the batches and the init follow ``seed``."""
    state, fewshot = _backbone()
    torch.manual_seed(seed)  # as train.search_lr: the adapter's initialisation
    lora = {"adapters": {"lora": {"rank": 2}}}
    adapted = fresh_adapted(model_config(SCENE, MODEL), state, lora, (4, 4), torch.device("cpu"))
    return adapt(adapted, fewshot, AdaptConfig(steps=2, batch_size=2), 0.01, seed)


def _pretraining(seed):
    cfg = PretrainConfig(**{**SECTION["pretraining"], "steps": 2, "batch_size": 4, "seed": seed})
    return pretrain(model_config(SCENE, MODEL), SCENE, SHIFT, cfg, torch.device("cpu"))[1]


def _cast(seed):
    return dataclasses.replace(SHIFT, cast_seed=seed).cast(SCENE.channels).numpy()


PRODUCTS = {
    # one seed draws its scene sets and drives its adaptation
    ("seeds",): (_splits, _adaptation),
    ("pretraining", "seed"): (_pretraining,),
    ("low_light", "cast_seed"): (_cast,),
}


def test_the_walk_finds_every_seed_key():
    assert set(seed_paths(SECTION)) == set(PRODUCTS)


@pytest.mark.parametrize("path", sorted(PRODUCTS), ids=".".join)
def test_changing_a_seed_changes_what_it_seeds(path):
    value = SECTION
    for key in path:
        value = value[key]
    seed = value[0] if isinstance(value, list) else value
    for product in PRODUCTS[path]:
        first = np.asarray(product(seed))
        assert np.array_equal(first, np.asarray(product(seed)))  # deterministic
        assert not np.array_equal(first, np.asarray(product(seed + 1000)))  # a shifted seed
