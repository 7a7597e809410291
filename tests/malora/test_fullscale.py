"""The full-scale loaders and jobs on a tiny local CLIP with KnOTS-format peft adapters and
parquet image splits (no network): adapters load as peft's own ΔW, the merged vision tower
is peft's merged tower, and both jobs run end to end."""

import numpy as np
import pytest
import torch

from repro.malora.fullscale_data import (
    decode,
    load_adapter,
    load_parquet_images,
    load_shards,
    parquet_class_names,
)
from repro.malora.peft_merge import lora_deltas
from repro.malora.steps import full_config, full_step
from tests.malora.malora_helpers import tiny_clip_fixture

RULES = {
    "methods": {
        "task_arithmetic": {"rule": "task_arithmetic"},
        "ta_tuned": {"rule": "task_arithmetic", "tune": True},
        "malora": {"rule": "malora"},
    },
    "scale_grid": [0.5, 1.0],
}
SETTINGS = {
    "seeds": [0, 1],
    "calibration_per_task": 6,
    "margin": {"stat": "softmin"},
    "batch_size": 5,
}


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    return tiny_clip_fixture(tmp_path_factory.mktemp("clip"))


def test_adapters_load_as_peft_computes_them(fixture):
    names = [n for n, _ in fixture["clip"].named_parameters() if n.startswith("vision_model.")]
    for task in fixture["tasks"].values():
        deltas = load_adapter(*task["adapter"], names)
        reference = lora_deltas(task["peft_model"], "default")
        assert len(deltas) == len(reference) == 2 * 4  # 2 layers × q, k, v, out
        for name, value in reference.items():
            torch.testing.assert_close(deltas[f"vision_model.{name}"], value, rtol=1e-5, atol=1e-6)


def test_an_ambiguous_module_path_is_an_error(fixture):
    names = [n for n, _ in fixture["clip"].named_parameters()]  # text tower too
    with pytest.raises(KeyError, match="matches 2"):
        load_adapter(*fixture["tasks"]["task0"]["adapter"], names)


def test_missing_files_and_empty_adapters_are_named(fixture, tmp_path):
    names = [n for n, _ in fixture["clip"].named_parameters()]
    config = fixture["tasks"]["task0"]["adapter"][0]
    with pytest.raises(FileNotFoundError, match="nowhere.bin"):
        load_adapter(config, tmp_path / "nowhere.bin", names)
    torch.save({"unrelated.weight": torch.zeros(2)}, tmp_path / "empty.bin")
    with pytest.raises(ValueError, match="no LoRA factors"):
        load_adapter(config, tmp_path / "empty.bin", names)


def test_parquet_images_labels_and_class_names(fixture):
    test = fixture["tasks"]["task1"]["test"]
    assert parquet_class_names(test[0]) == ["class1_0", "class1_1", "class1_2"]
    raw, labels = load_parquet_images(test[0])
    assert len(raw) == 12 and labels.tolist() == sorted(labels.tolist())
    sub_raw, sub = load_shards(test * 2, limit=5, seed=3)
    assert len(sub_raw) == 5 and set(sub) <= {0, 1, 2}


def test_merged_tower_is_peft_merged_tower(fixture, tmp_path):
    from repro.malora.clip_bench import ClipBench

    files = {
        "model": fixture["model"],
        "tasks": {
            k: {kk: v for kk, v in t.items() if kk != "peft_model"}
            for k, t in fixture["tasks"].items()
        },
    }
    model_dir = tmp_path / "m"
    model_dir.mkdir()
    for p in files["model"]:
        (model_dir / p.split("/")[-1]).symlink_to(p)
    bench = ClipBench(full_config(files, SETTINGS, RULES, str(model_dir), "cpu"))
    raw, _ = load_parquet_images(files["tasks"]["task0"]["test"][0])
    bench.set_delta({k: v.numpy() for k, v in bench.deltas[0].items()})
    ours = bench.logits(0, raw)
    merged = fixture["tasks"]["task0"]["peft_model"].merge_and_unload()
    pixels = bench.processor(images=[decode(r) for r in raw], return_tensors="pt")
    pixels = pixels["pixel_values"]
    with torch.no_grad():
        pooled = merged(pixel_values=pixels).pooler_output
        emb = torch.nn.functional.normalize(bench.model.visual_projection(pooled), dim=-1)
    torch.testing.assert_close(ours, 100 * emb @ bench.heads[0].T, rtol=1e-4, atol=1e-4)
    bench.set_delta({})  # back to W0 exactly
    for name, value in bench.base.items():
        torch.testing.assert_close(dict(bench.model.named_parameters())[name], value)


def test_both_jobs_run_end_to_end(fixture, tmp_path):
    from repro.common.io import read_json

    files = {
        "model": fixture["model"],
        "tasks": {
            k: {kk: v for kk, v in t.items() if kk != "peft_model"}
            for k, t in fixture["tasks"].items()
        },
    }
    full_step(files, SETTINGS, RULES, "cpu", tmp_path / "individual.json")
    individual = read_json(tmp_path / "individual.json")
    assert len(individual["individual"]) == 2
    assert all(0 <= a <= 1 for a in individual["zero_shot"] + individual["individual"])
    full_step(
        files,
        SETTINGS,
        RULES,
        "cpu",
        tmp_path / "ta.json",
        method="ta_tuned",
        individual=tmp_path / "individual.json",
    )
    runs = read_json(tmp_path / "ta.json")["runs"]
    assert [r["seed"] for r in runs] == [0, 1]
    full_step(
        files,
        SETTINGS,
        RULES,
        "cpu",
        tmp_path / "malora.json",
        method="malora",
        individual=tmp_path / "individual.json",
    )
    for r in read_json(tmp_path / "malora.json")["runs"]:
        assert "error" not in r and r["calibration_evaluations"] == 0
        assert len(r["alphas"]) == 2 and min(r["alphas"]) > 0
    for r in runs:
        assert r["calibration_evaluations"] == 2
        expected = np.mean(np.array(r["task_accuracy"]) / individual["individual"])
        assert r["normalised_accuracy"] == pytest.approx(expected)


def test_peft_loads_the_adapters_with_their_patterns(fixture, tmp_path):
    """An adapter whose adapter_config.json has rank_pattern and alpha_pattern: peft's loader
    gives the source model's own ΔW per layer; the uniform alpha / r of the dense reader
    does not (v_proj's alpha differs)."""
    from peft import LoraConfig, get_peft_model
    from transformers import CLIPVisionModel

    from repro.malora.fullscale_data import load_adapter_peft

    clip = fixture["clip"]
    names = [n for n, _ in clip.named_parameters() if n.startswith("vision_model.")]

    def tower():
        model = CLIPVisionModel(clip.config.vision_config)
        model.load_state_dict(clip.vision_model.state_dict())
        return model

    config = LoraConfig(
        r=4,
        lora_alpha=4,
        target_modules=["q_proj", "v_proj"],
        rank_pattern={"q_proj": 2},
        alpha_pattern={"v_proj": 16},
    )
    source = get_peft_model(tower(), config)
    torch.manual_seed(1)
    with torch.no_grad():
        for name, p in source.named_parameters():
            if "lora_B" in name:
                p.normal_()
    source.save_pretrained(tmp_path, safe_serialization=False)
    files = (tmp_path / "adapter_config.json", tmp_path / "adapter_model.bin")
    target = tower()
    loaded = load_adapter_peft(*files, target, names)
    assert not any("lora_" in n for n, _ in target.named_parameters())  # unloaded again
    reference = lora_deltas(source, "default")
    assert len(loaded) == len(reference) == 2 * 2
    for name, value in reference.items():
        torch.testing.assert_close(loaded[f"vision_model.{name}"], value, rtol=1e-5, atol=1e-6)
    dense = load_adapter(*files, names)
    v = next(k for k in reference if "v_proj" in k)
    assert not torch.allclose(dense[f"vision_model.{v}"], reference[v])


def test_peft_loader_refuses_an_adapter_whose_keys_miss_the_model(fixture, tmp_path):
    from transformers import CLIPTextModel

    from repro.malora.fullscale_data import load_adapter_peft

    clip = fixture["clip"]
    text = CLIPTextModel(clip.config.text_config)  # no vision layers for the adapter's keys
    names = [n for n, _ in clip.named_parameters()]
    with pytest.raises(KeyError, match="LoRA modules in the file"):
        load_adapter_peft(*fixture["tasks"]["task0"]["adapter"], text, names)
