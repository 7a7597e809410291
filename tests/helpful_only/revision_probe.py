"""Run in a fresh process under a temporary HF_HOME with HF_HUB_OFFLINE=1 (test_revision):
load a hub id at a revision through the full-scale code (model, tokenizer, SFT and RLOO
trainers) and print what was loaded as one JSON line."""

import json
import sys

import torch

from repro.helpful_only import fullrun
from repro.helpful_only.fullscale import LoraSpec, load_tokenizer, model_kwargs
from repro.helpful_only.recipes import TrainConfig

PROBED = ("model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight")


def fingerprint(model) -> list[float]:
    """Sums (float64) of two base weights; LoRA wrappers' names mapped back to the base's."""
    base = {
        n.replace("base_model.model.", "").replace(".base_layer", ""): p
        for n, p in model.named_parameters()
        if "lora" not in n
    }
    return [float(base[name].detach().double().sum()) for name in PROBED]


def main(repo: str, revision: str | None, pairs: list, spec: dict) -> dict:
    ref = {"id": repo, "revision": revision, "dtype": "float32"}
    model, tokenizer = fullrun.load_for(ref)
    out = {"load": fingerprint(model), "chat_template": tokenizer.chat_template}
    tokenizer = load_tokenizer(repo, revision)
    data = fullrun.FullData([tuple(p) for p in pairs], spec["charq"], spec["sdf"], spec["steer"])
    cfg = TrainConfig(steps=1, batch_size=2, num_generations=2, lr=1e-3, log_every=1)
    lora = LoraSpec(r=2, alpha=4, target_modules=("q_proj",))
    for trainer in ("sft", "rloo"):
        trained, _ = fullrun.train_full(
            repo,
            tokenizer,
            data,
            {"trainer": trainer, "mixture": {"ar": 1}},
            cfg,
            lora,
            0,
            device="cpu",
            max_completion_length=2,
            reward=lambda completions, **_: [float(i % 2) for i in range(len(completions))],
            model_kwargs=model_kwargs(revision, "float32"),
        )
        out[trainer] = fingerprint(trained)
        assert {p.dtype for p in trained.parameters()} == {torch.float32}
    return out


def probe_all(repo: str, revisions: list, pairs: list, spec: dict) -> dict:
    """:func:`main` per revision (one process: the imports once); an error is recorded by
    its type and message."""
    out = {}
    for revision in revisions:
        try:
            out[str(revision)] = main(repo, revision, pairs, spec)
        except Exception as error:  # noqa: BLE001 (the test reads which error)
            out[str(revision)] = {"error": f"{type(error).__name__}: {error}"}
    return out


if __name__ == "__main__":
    args = json.loads(sys.argv[1])
    print(json.dumps(probe_all(args["repo"], args["revisions"], args["pairs"], args["spec"])))
