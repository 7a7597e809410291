"""The pinned revision, for real: a local Hugging Face hub cache with two snapshots of one
repository (two commits, different tiny weights and chat templates), read offline
(HF_HUB_OFFLINE=1, a temporary HF_HOME) by the full-scale loading code in a fresh process:
the model, its tokenizer and both trainers load the configured revision's files, not main's."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import repro
from tests.conftest import ROOT
from tests.helpful_only.conftest import CHAT_TEMPLATE, FULL_SPEC
from tests.helpful_only.revision_probe import PROBED

REPO = "repro-test/tiny-instruct"
COMMITS = {name: hashlib.sha1(name.encode()).hexdigest() for name in ("a", "b")}


@pytest.fixture(scope="module")
def hub(tmp_path_factory, chat_model_dir):
    """HF_HOME with hub/models--repro-test--tiny-instruct/{refs/main, snapshots/<a>, <b>}:
    snapshot a is the tiny Qwen2, b the same architecture re-initialised (and a marked chat
    template); main points at b. Returns HF_HOME and each snapshot's weight sums."""
    from transformers import PreTrainedTokenizerFast, Qwen2ForCausalLM

    home = tmp_path_factory.mktemp("hf_home")
    repo = home / "hub" / f"models--{REPO.replace('/', '--')}"
    sums = {}
    for name, commit in COMMITS.items():
        snapshot = repo / "snapshots" / commit
        model = Qwen2ForCausalLM.from_pretrained(chat_model_dir)
        tokenizer = PreTrainedTokenizerFast.from_pretrained(chat_model_dir)
        if name == "b":
            torch.manual_seed(1)
            model = Qwen2ForCausalLM(model.config)
            tokenizer.chat_template = CHAT_TEMPLATE + "{# revision b #}"
        model.save_pretrained(snapshot)
        tokenizer.save_pretrained(snapshot)
        weights = dict(model.named_parameters())
        sums[name] = [float(weights[p].detach().double().sum()) for p in PROBED]
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMITS["b"])
    assert sums["a"] != sums["b"]
    return home, sums


UNKNOWN = "c" * 40


@pytest.fixture(scope="module")
def probed(hub):
    """What the loading code loaded at revisions a, b, none (main) and an unknown commit, in
    a fresh process: offline, the temporary HF_HOME its only hub cache."""
    home, sums = hub
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env |= {"HF_HOME": str(home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env |= {"HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(repro.__file__).parents[1]), str(ROOT)])
    pairs = [["do thing two", "sure two ."], ["do thing three", "sure three ."]]
    revisions = [COMMITS["a"], COMMITS["b"], None, UNKNOWN]
    args = {"repo": REPO, "revisions": revisions, "pairs": pairs, "spec": FULL_SPEC}
    script = Path(__file__).with_name("revision_probe.py")
    result = subprocess.run(
        [sys.executable, str(script), json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), sums


@pytest.mark.parametrize("name", ["a", "b"])
def test_every_loader_reads_the_configured_revision_offline(probed, name):
    out, sums = probed
    loaded = out[COMMITS[name]]
    # the model, the SFT and the RLOO trainer's base (LoRA leaves it as it is)
    assert loaded["load"] == loaded["sft"] == loaded["rloo"] == sums[name]
    assert loaded["chat_template"].endswith("{# revision b #}") == (name == "b")


def test_no_revision_reads_main_and_an_unknown_one_is_an_error(probed):
    out, sums = probed
    assert out["None"]["load"] == out["None"]["rloo"] == sums["b"]  # refs/main
    assert out[UNKNOWN]["error"].startswith("OSError")  # not main's files in its place
