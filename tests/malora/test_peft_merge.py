"""peft's exact ``cat`` merge: (a) one adapter at weight 1 is itself, (b) ``cat`` is
Σ w_t · scaling_t · B_t A_t, (c) our ΔW-space merge builds the same model, and the rsLoRA
over-scaling of peft 0.21.2 is corrected."""

import math

import pytest
import torch
from peft import LoraConfig, get_peft_model
from torch.func import functional_call

from repro.malora import lora_deltas, merge, merge_cat
from repro.malora.digits import MLP
from repro.malora.peft_merge import base_state, lora_layers

TARGETS = ["fc1", "fc2", "head"]


def _model(rslora=False, specs=((4, 8), (2, 3))):
    """A peft MLP with adapters t1, t2, … of (rank, alpha) ``specs`` and random B factors."""
    torch.manual_seed(0)
    model = None
    for t, (r, alpha) in enumerate(specs, start=1):
        config = LoraConfig(r=r, lora_alpha=alpha, target_modules=TARGETS, use_rslora=rslora)
        if model is None:
            model = get_peft_model(MLP(), config, adapter_name=f"t{t}")
        else:
            model.add_adapter(f"t{t}", config)
    with torch.no_grad():
        for layer in lora_layers(model).values():
            for b in layer.lora_B.values():
                b.weight.normal_()
    return model


def _by_hand(model, adapters, weights):
    """Σ_t w_t · scaling_t · B_t A_t from the raw factors."""
    out = {}
    for path, layer in lora_layers(model).items():
        out[f"{path}.weight"] = sum(
            w * layer.scaling[a] * layer.lora_B[a].weight @ layer.lora_A[a].weight
            for a, w in zip(adapters, weights, strict=True)
        )
    return out


def test_a_one_adapter_at_weight_one_reproduces_itself():
    model = _model()
    merge_cat(model, ["t1"], [1.0], "copy")
    original, copy = lora_deltas(model, "t1"), lora_deltas(model, "copy")
    for name in original:
        torch.testing.assert_close(copy[name], original[name], rtol=0, atol=1e-6)


@pytest.mark.parametrize("rslora", [False, True])
def test_b_cat_is_the_weighted_sum_of_scaled_products(rslora):
    model = _model(rslora=rslora)
    weights = [0.7, -1.3]
    expected = _by_hand(model, ["t1", "t2"], weights)
    merge_cat(model, ["t1", "t2"], weights, "merged")
    got = lora_deltas(model, "merged")
    for name in expected:
        torch.testing.assert_close(got[name], expected[name], rtol=1e-5, atol=1e-5)


def test_c_the_dense_merge_builds_the_same_model_as_peft():
    model = _model()
    weights = [0.4, 1.7]
    x = torch.randn(16, 64)
    deltas = [lora_deltas(model, a) for a in ("t1", "t2")]
    state = merge(base_state(model), deltas, weights)
    direct = functional_call(MLP(), state, (x,))
    merge_cat(model, ["t1", "t2"], weights, "merged")
    model.set_adapter("merged")
    with torch.no_grad():
        torch.testing.assert_close(model(x), direct, rtol=1e-5, atol=1e-5)


def test_raw_peft_overscales_rslora_cat_merges_by_the_root_of_the_new_rank():
    """Documents upstream issue 3761 in the pinned peft: when this fails, peft fixed it and
    merge_cat's correction must go."""
    model = _model(rslora=True)
    expected = {k: v.detach() for k, v in _by_hand(model, ["t1", "t2"], [1.0, 1.0]).items()}
    model.add_weighted_adapter(["t1", "t2"], [1.0, 1.0], "raw", combination_type="cat")
    got = lora_deltas(model, "raw")
    name = next(iter(expected))
    ratio = float(got[name].norm() / expected[name].norm())
    assert ratio == pytest.approx(math.sqrt(4 + 2), rel=1e-4)


def test_peft_linear_is_not_task_arithmetic():
    """Why ``linear`` is never used: with unequal weights it adds cross terms B_i A_j."""
    model = _model(specs=((4, 4), (4, 4)))
    weights = [0.3, 1.5]
    expected = _by_hand(model, ["t1", "t2"], weights)
    model.add_weighted_adapter(["t1", "t2"], weights, "lin", combination_type="linear")
    got = lora_deltas(model, "lin")
    name = next(iter(expected))
    assert not torch.allclose(got[name], expected[name], atol=1e-3)


def test_merge_cat_refuses_to_overwrite_and_mismatched_weights():
    model = _model()
    with pytest.raises(ValueError, match="exists"):
        merge_cat(model, ["t1"], [1.0], "t2")
    with pytest.raises(ValueError, match="weights"):
        merge_cat(model, ["t1", "t2"], [1.0], "new")
    with pytest.raises(KeyError, match="not on any"):
        lora_deltas(model, "nope")


def test_lora_factors_multiply_to_the_dense_updates():
    from repro.malora.peft_merge import lora_factors

    model = _model()
    for adapter in ("t1", "t2"):
        dense = lora_deltas(model, adapter)
        factors = lora_factors(model, adapter)
        assert set(factors) == set(dense)
        for name, (b, a) in factors.items():
            torch.testing.assert_close(b @ a, dense[name], rtol=1e-5, atol=1e-6)


def test_lora_factors_of_a_fan_in_fan_out_layer_multiply_to_its_stored_update():
    """A Conv1D layer (GPT-2's, weight stored in × out) with fan_in_fan_out: the factors'
    product is peft's own (transposed) delta weight, the shape of the stored weight."""
    from peft import LoraConfig, get_peft_model
    from transformers.pytorch_utils import Conv1D

    from repro.malora.peft_merge import lora_factors

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = Conv1D(6, 4)  # nx = 4 inputs, nf = 6 outputs: weight (4, 6)

        def forward(self, x):
            return self.c_attn(x)

    torch.manual_seed(0)
    config = LoraConfig(r=2, lora_alpha=4, target_modules=["c_attn"], fan_in_fan_out=True)
    model = get_peft_model(Net(), config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_()
    dense = lora_deltas(model, "default")
    ((name, (b, a)),) = lora_factors(model, "default").items()
    assert dense[name].shape == (4, 6)
    torch.testing.assert_close(b @ a, dense[name], rtol=1e-5, atol=1e-6)
