"""Every step a rule runs is also a command: ``python -m repro.r3_adapter.<step> --help``;
the package exports its public API lazily (the config check imports it at DAG time)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import assert_steps_answer_help

STEPS = ["prepare", "pretrain", "train", "evaluate", "figures", "claims", "fullrun",
         "fullrun code", "fullrun pairs", "fullrun run", "fullrun summary"]  # fmt: skip


def test_every_step_answers_help():
    assert_steps_answer_help("r3_adapter", STEPS)


def test_package_exports_without_importing_torch():
    code = (
        "import sys, repro.r3_adapter as r, repro.r3_adapter.configcheck\n"
        "assert 'torch' not in sys.modules, 'the DAG-time import pulled in torch'\n"
        "from repro.r3_adapter import build_method, RelationalConfig, make_scenes\n"
        "assert RelationalConfig().candidates == 6 and callable(build_method)\n"
        "print(r.TITLE)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "3R-Adapter"


def test_prepare_pretrain_and_train_clis_read_one_config(tmp_path):
    """The pretrained backbone of the pretrain CLI loads in the config-driven train CLI (the
    pretrain CLI once ignored the config's grid and model)."""
    import torch
    import yaml

    from repro.r3_adapter import prepare, pretrain, train
    from tests.conftest import ROOT

    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    section = config["papers"]["r3_adapter"]
    section["pretraining"]["steps"] = 2
    section["adaptation"] |= {"steps": 1, "lrs": [0.01], "widen": 0}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"papers": {"r3_adapter": section}}))
    data = [str(tmp_path / f"seed{s}.npz") for s in section["seeds"]]
    prepare.main(["--config", str(path), *data])
    model, record = str(tmp_path / "backbone.pt"), str(tmp_path / "backbone.json")
    pretrain.main(["--config", str(path), "--device", "cpu", model, record])
    state = torch.load(model, weights_only=True)
    assert state["pos_embed"].shape == (section["scene"]["grid"] ** 2, section["model"]["dim"])
    states, run = str(tmp_path / "lora.pt"), str(tmp_path / "lora.json")
    train.main(["--config", str(path), "--device", "cpu", "lora_r2", model, states, run, *data])
    assert set(torch.load(states, weights_only=True)) == set(section["seeds"])
