"""3R-Adapter's jobs on two cores: the pretraining (which every training job waits for) runs
first on the configured threads, then the training jobs longest first."""

from __future__ import annotations

import re

import pytest
import torch
import yaml

from tests.conftest import ROOT, snakemake

EMBEDDED = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["r3_adapter"]


def _priorities(tmp_path) -> dict[str, int]:
    """Each r3_adapter job's priority in a dry run of the embedded default."""
    out = snakemake("-n", "--verbose", "--cores", "2", "r3_adapter", workdir=tmp_path).stdout
    priorities = {}
    for block in out.split("\nrule ")[1:]:
        rule = block.split(":", 1)[0]
        method = re.search(r"wildcards: method=(\w+)", block)
        priority = re.search(r"priority: (\d+)", block)
        name = f"{rule}[{method.group(1)}]" if method else rule
        priorities[name] = int(priority.group(1)) if priority else 0
    return priorities


@pytest.mark.workflow
def test_pretraining_first_then_the_longest_training_jobs(tmp_path):
    got = _priorities(tmp_path)
    train = {k[len("r3_adapter_train[") : -1]: v for k, v in got.items() if "_train[" in k}
    assert set(train) == set(EMBEDDED["methods"])
    assert got["r3_adapter_pretrain"] > max(train.values())
    methods = EMBEDDED["methods"]
    relational = [m for m, spec in methods.items() if "relational" in spec.get("adapters", {})]
    assert relational and min(train[m] for m in relational) > train["lora_r6"]
    assert train["lora_r6"] == train["full_ft"] > train["dustbin_bias"] > train["frozen"]


def test_pretraining_runs_on_its_configured_threads_whatever_the_caller_set(tmp_path):
    """The weights depend on the thread count, so the job takes it from the config."""
    from repro.r3_adapter import pretrain
    from repro.r3_adapter.scenes import SceneConfig
    from repro.r3_adapter.shift import LowLight

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        cfg = pretrain.PretrainConfig(**{**EMBEDDED["pretraining"], "steps": 1, "threads": 2})
        model, record = str(tmp_path / "b.pt"), str(tmp_path / "b.json")
        pretrain.run(SceneConfig(**EMBEDDED["scene"]), LowLight(**EMBEDDED["low_light"]),
                     EMBEDDED["model"], cfg, model, record, device="cpu")  # fmt: skip
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    # the embedded default's numbers (docs/r3_adapter.md) come from a one-thread backbone
    assert pretrain.PretrainConfig(**EMBEDDED["pretraining"]).threads == 1
