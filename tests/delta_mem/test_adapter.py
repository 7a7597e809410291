"""The released adapter's format (official trainer's layout) loads, and a forward pass
equals a reference computed from the raw tensors with the official formulas."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from repro.delta_mem import adapter
from repro.delta_mem.memory import MemoryConfig
from repro.delta_mem.wrapper import DeltaMem

_spec = importlib.util.spec_from_file_location(
    "official_adapter", Path(__file__).parent / "fixtures" / "official_adapter.py"
)
official = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(official)


class _Reference(torch.nn.Module):
    """One projection of one attention layer, steered from the raw adapter tensors: the
    official token-state write (delta_impl.py 856–900 projections, 918–971 coefficients,
    1543–1586 scan, 1731–1915 forward), one token at a time, in float64."""

    def __init__(self, base, raw, head, shared):
        super().__init__()
        self.base, self.raw, self.head, self.shared = base, raw, head, shared

    def forward(self, x):
        raw, s = self.raw, self.shared
        if self.head == "q":
            h = x.double()
            mq, mk = (
                F.normalize(torch.tanh(h @ raw[f"memory_{p}_proj"].double().T), dim=-1, eps=1e-6)
                for p in "qk"
            )
            mv = h @ raw["memory_v_proj"].double().T
            beta = torch.sigmoid(h @ raw["beta_proj"].double().T + raw["beta_bias"].double())
            state = s.get("state", torch.zeros(x.shape[0], mv.shape[-1], mq.shape[-1]).double())
            reads = []
            for t in range(x.shape[1]):  # standard: keep λ = 1 − β, erase β, write β, per row
                b = beta[:, t, :, None]
                reads.append(torch.einsum("bij,bj->bi", state, mq[:, t]))
                pred = torch.einsum("bij,bj->bi", state, mk[:, t])
                state = (
                    (1 - b) * state
                    - b * pred[:, :, None] * mk[:, t, None, :]
                    + b * mv[:, t, :, None] * mk[:, t, None, :]
                )
            s["state"], s["reads"] = state, torch.stack(reads, 1)
        delta = 2.0 * s["reads"] @ raw[f"delta_{self.head}_proj"].double().T  # α / r = 16 / 8
        return self.base(x) + delta.to(x.dtype)


def _reference_model(model, directory, heads):
    ref = copy.deepcopy(model)
    state = torch.load(Path(directory) / adapter.ADAPTER_FILE, weights_only=True)
    shared = {}
    for name, attn in ref.named_modules():
        if name.endswith("self_attn"):
            raw = {k.rsplit(".", 1)[1]: v for k, v in state.items() if k.startswith(name + ".")}
            shared[name] = {}
            for h in ("q", *heads):
                base = getattr(attn, f"{h}_proj")
                setattr(attn, f"{h}_proj", _Reference(base, raw, h, shared[name]))
    return ref, shared


@pytest.mark.parametrize("heads", [("q", "o"), ("q", "k", "v", "o")])
def test_official_adapter_forward_equals_the_raw_tensor_reference(random_qwen3, tmp_path, heads):
    model = random_qwen3()
    directory = official.write(tmp_path / "adapter", model, rank=8, heads=heads)
    ref, shared = _reference_model(model, directory, [h for h in heads if h != "q"])
    dm = DeltaMem(model, MemoryConfig(rank=8, heads=heads, chunk_size=4))
    adapter.load_adapter(dm, directory)
    tokens = torch.randint(0, 64, (2, 11))
    with torch.no_grad(), dm.phase(writes=True):
        logits = model(tokens).logits
    with torch.no_grad():
        expected = ref(tokens).logits
    torch.testing.assert_close(logits, expected, rtol=1e-4, atol=1e-4)
    for name, state in zip(dm.names, dm.states(), strict=True):
        torch.testing.assert_close(state.double(), shared[name]["state"], rtol=1e-5, atol=1e-6)
    assert (logits - random_qwen3()(tokens).logits).abs().max() > 1e-2  # the adapter acts


def test_steering_keys_the_module_lacks_is_an_error(random_qwen3, tmp_path):
    model = random_qwen3()
    directory = official.write(tmp_path / "a", model, rank=8, heads=("q", "k", "o"))
    zero_kv = official.write(tmp_path / "b", model, rank=8, heads=("q", "o"))
    dm = DeltaMem(model, MemoryConfig(rank=8))  # q and o only
    with pytest.raises(ValueError, match=r"delta_k_proj is non-zero.*'k' among the heads"):
        adapter.load_adapter(dm, directory / adapter.ADAPTER_FILE)
    adapter.load_adapter(dm, zero_kv)  # zero Δk/Δv (the released layout) load into q/o


@pytest.mark.parametrize(
    ("override", "match"),
    [
        ({"rank": 4}, "rank = 4, here 8"),
        ({"state_update_mode": "lambda_outside"}, "state_update_mode"),
        ({"num_state_heads": 4}, "num_state_heads"),
        ({"memory_write_granularity": "message_mean"}, "memory_write_granularity"),
    ],
)
def test_unsupported_adapter_configurations_are_named(random_qwen3, tmp_path, override, match):
    model = random_qwen3()
    directory = official.write(tmp_path / "a", model, rank=8)
    config = json.loads((directory / adapter.CONFIG_FILE).read_text()) | override
    (directory / adapter.CONFIG_FILE).write_text(json.dumps(config))
    with pytest.raises(ValueError, match=match):
        adapter.load_adapter(DeltaMem(model, MemoryConfig(rank=8)), directory)


def test_wrong_modules_or_extra_parameters_are_named(random_qwen3, tmp_path):
    model = random_qwen3()
    directory = official.write(tmp_path / "a", model, rank=8)
    state = torch.load(directory / adapter.ADAPTER_FILE, weights_only=True)
    dm = DeltaMem(random_qwen3(num_hidden_layers=3), MemoryConfig(rank=8))
    with pytest.raises(ValueError, match="do not match the model's attention modules"):
        adapter.load_adapter(dm, directory)
    state["model.layers.0.self_attn.lambda_proj"] = torch.zeros(8, 32)
    torch.save(state, directory / adapter.ADAPTER_FILE)
    with pytest.raises(ValueError, match=r"not supported here: \['lambda_proj'\]"):
        adapter.load_adapter(DeltaMem(model, MemoryConfig(rank=8)), directory)


def test_adapter_files_load_with_weights_only(random_qwen3, tmp_path):
    """A pickled object that is not a tensor dict is refused, not executed."""
    model = random_qwen3()
    directory = official.write(tmp_path / "a", model, rank=8)
    torch.save(
        {"model.layers.0.self_attn.memory_q_proj": Path("x")}, directory / "delta_mem_adapter.pt"
    )
    with pytest.raises(Exception, match="Weights only load failed"):
        adapter.load_adapter(DeltaMem(model, MemoryConfig(rank=8)), directory)


def test_our_adapters_round_trip(random_qwen3, tmp_path):
    model = random_qwen3()
    dm = DeltaMem(model, MemoryConfig(rank=4, init="base_slice_fixed"))
    adapter.save_adapter(dm, tmp_path / "ours.safetensors")
    other = DeltaMem(random_qwen3(), MemoryConfig(rank=4))
    adapter.load_adapter(other, tmp_path / "ours.safetensors")
    for a, b in zip(
        dm.memories.state_dict().values(), other.memories.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b)
    with pytest.raises(ValueError, match="not a δ-Mem adapter of this configuration"):
        adapter.load_adapter(
            DeltaMem(random_qwen3(), MemoryConfig(rank=4, heads=("q",))),
            tmp_path / "ours.safetensors",
        )
