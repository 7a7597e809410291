"""The full-scale loaders and jobs on a tiny local CLIP with KnOTS-format peft adapters and
parquet image shards (no network): adapters load as peft's own ΔW and factors, KnOTS's
holdout of the test split, the pixel cache equals the image processor's own pixels, the
merged vision tower is peft's merged tower, and both jobs run end to end."""

import numpy as np
import pytest
import torch

from repro.malora.clip_data import holdout_rows, knots_indices, load_cached, normalise
from repro.malora.fullscale_data import (
    decode,
    load_factors,
    load_parquet_images,
    load_shards,
    parquet_class_names,
)
from repro.malora.peft_merge import lora_deltas
from repro.malora.steps import full_config, full_step, pixels_step
from tests.malora.malora_helpers import tiny_clip_fixture

RULES = {
    "methods": {
        "task_arithmetic": {"rule": "task_arithmetic"},
        "ta_tuned": {"rule": "task_arithmetic", "tune": True},
        "malora": {"rule": "malora"},
        "lorahub": {"rule": "lorahub", "params": {"budget": 2}},
    },
    "scale_grid": [0.5, 1.0],
}
SETTINGS = {
    "seeds": [0, 1],
    "calibration_per_task": 6,
    "margin": {"stat": "softmin"},
    "batch_size": 5,
}


def pixel_spec(task: dict) -> dict:
    """The pixels step's spec of a fixture task (as malora_pixel_spec builds it)."""
    holdout = {k: v for k, v in task["holdout"].items() if k != "indices"}
    return {
        "test": task["test"],
        "rows": task["rows"],
        "holdout": holdout,
        "indices": task["holdout"].get("indices"),
    }


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    return tiny_clip_fixture(tmp_path_factory.mktemp("clip"))


@pytest.fixture(scope="module")
def files(fixture, tmp_path_factory):
    """The full-scale job's files: every task's pixels cached once by the pixels step."""
    root = tmp_path_factory.mktemp("pixels")
    tasks = {}
    for name, t in fixture["tasks"].items():
        pixels_step(pixel_spec(t), fixture["model"], str(root / name))
        tasks[name] = {
            "adapter": t["adapter"],
            "pixels": str(root / name),
            "templates": t["templates"],
        }
    return {"model": fixture["model"], "tasks": tasks}


def test_adapters_load_as_peft_computes_them(fixture):
    names = [n for n, _ in fixture["clip"].named_parameters() if n.startswith("vision_model.")]
    for task in fixture["tasks"].values():
        factors = load_factors(*task["adapter"], names)
        reference = lora_deltas(task["peft_model"], "default")
        assert len(factors) == len(reference) == 2 * 4  # 2 layers × q, k, v, out
        for name, value in reference.items():
            b, a = factors[f"vision_model.{name}"]
            torch.testing.assert_close(b @ a, value, rtol=1e-5, atol=1e-6)


def test_an_ambiguous_module_path_is_an_error(fixture):
    names = [n for n, _ in fixture["clip"].named_parameters()]  # text tower too
    with pytest.raises(KeyError, match="matches 2"):
        load_factors(*fixture["tasks"]["task0"]["adapter"], names)


def test_missing_files_and_empty_adapters_are_named(fixture, tmp_path):
    names = [n for n, _ in fixture["clip"].named_parameters()]
    config = fixture["tasks"]["task0"]["adapter"][0]
    with pytest.raises(FileNotFoundError, match="nowhere.bin"):
        load_factors(config, tmp_path / "nowhere.bin", names)
    torch.save({"unrelated.weight": torch.zeros(2)}, tmp_path / "empty.bin")
    with pytest.raises(ValueError, match="no LoRA factors"):
        load_factors(config, tmp_path / "empty.bin", names)


def test_every_shard_is_read_with_labels_and_class_names(fixture):
    shards = fixture["tasks"]["task1"]["test"]
    assert len(shards) == 2 and parquet_class_names(shards[0]) == [
        "class1_0",
        "class1_1",
        "class1_2",
    ]
    raw, labels = load_parquet_images(shards[1])
    assert len(raw) == 12 and labels.tolist() == sorted(labels.tolist())
    raw, labels = load_shards(shards)
    assert len(raw) == 24 and raw[12] == load_parquet_images(shards[1])[0][0]


def test_holdout_is_knots_split_of_the_test_rows():
    """KnOTS: validation = the first int(n · fraction) of the shuffled indices, test = the
    rest; together every row once."""
    order = np.random.default_rng(3).permutation(10)
    rows = holdout_rows(10, {"fraction": 0.2}, order)
    assert rows["validation"].tolist() == order[:2].tolist()
    assert rows["test"].tolist() == order[2:].tolist()
    seeded = holdout_rows(10, {"fraction": 0.25, "seed": 1})
    assert len(seeded["validation"]) == 2  # int(2.5)
    assert sorted(np.concatenate(list(seeded.values())).tolist()) == list(range(10))
    again, shifted = (holdout_rows(40, {"fraction": 0.25, "seed": s}) for s in (1, 1001))
    assert (
        again["validation"].tolist()
        == holdout_rows(40, {"fraction": 0.25, "seed": 1})["validation"].tolist()
    )
    assert again["validation"].tolist() != shifted["validation"].tolist()  # the seed draws it
    with pytest.raises(ValueError, match="not a permutation"):
        holdout_rows(11, {"fraction": 0.2}, order)


def test_the_calibration_draw_follows_the_seed():
    """full_scale.seeds: each seed draws its calibration images from the validation part;
    the test part is the same rows whatever the seed."""
    from types import SimpleNamespace

    from repro.malora.clip_bench import ClipBench

    labels = np.arange(50)
    pixels = labels[:, None] * np.ones((1, 3))
    parts = [{"validation": (pixels, labels), "test": (pixels + 0.5, labels)}]
    bench = SimpleNamespace(cfg=SimpleNamespace(calibration_per_task=8, test_limit=20), parts=parts)

    def drawn(seed):
        calibration, test = ClipBench.data(bench, seed)
        return calibration[0][1].tolist(), test[0][1].tolist()

    (calibration, test), (again, _), (other, other_test) = map(drawn, (0, 0, 1000))
    assert calibration == again and len(calibration) == 8
    assert calibration != other
    assert test == other_test and len(test) == 20


def test_knots_index_files_load_without_unpickling_code(fixture, tmp_path):
    path = fixture["tasks"]["task0"]["holdout"]["indices"]
    assert sorted(knots_indices(path).tolist()) == list(range(24))
    torch.save({"not": torch.nn.Linear(1, 1)}, tmp_path / "module.pt")  # arbitrary objects
    with pytest.raises(Exception, match="[Ww]eights only"):
        knots_indices(tmp_path / "module.pt")


def test_cached_pixels_are_the_processors_and_the_split_is_held_out(fixture, files):
    from transformers import CLIPImageProcessor

    processor = CLIPImageProcessor.from_pretrained(str(fixture["model"][0]).rsplit("/", 1)[0])
    for name, t in fixture["tasks"].items():
        parts, meta = load_cached(files["tasks"][name]["pixels"])
        raw, labels = load_shards(t["test"])
        val, test = meta["validation_rows"], meta["test_rows"]
        assert len(val) == 12 and not set(val) & set(test)
        assert sorted(val + test) == list(range(24))
        if "indices" in t["holdout"]:  # KnOTS's own shuffle decides the rows
            assert val == knots_indices(t["holdout"]["indices"])[:12].tolist()
        for part, rows in (("validation", val), ("test", test)):
            pixels, y = parts[part]
            assert y.tolist() == labels[rows].tolist()
            expected = processor(images=[decode(raw[i]) for i in rows], return_tensors="pt")
            ours = normalise(pixels, processor, "cpu")
            torch.testing.assert_close(ours, expected["pixel_values"], rtol=0, atol=1e-5)
        assert meta["class_names"] == [f"class{name[-1]}_{c}" for c in range(3)]


def test_a_missing_shard_stops_the_cache(fixture, tmp_path):
    spec = pixel_spec(fixture["tasks"]["task1"])
    spec["test"] = spec["test"][:1]
    with pytest.raises(ValueError, match="12 rows, the split has 24"):
        pixels_step(spec, fixture["model"], str(tmp_path / "cache"))


def test_merged_tower_is_peft_merged_tower(fixture, files, tmp_path):
    from repro.malora.clip_bench import ClipBench

    model_dir = tmp_path / "m"
    model_dir.mkdir()
    for p in files["model"]:
        (model_dir / p.split("/")[-1]).symlink_to(p)
    bench = ClipBench(full_config(files, SETTINGS, RULES, str(model_dir), "cpu"))
    pixels, _ = bench.parts[0]["test"]
    rows = load_cached(files["tasks"]["task0"]["pixels"])[1]["test_rows"]
    raw, _ = load_shards(fixture["tasks"]["task0"]["test"])
    bench.set_delta({k: v.numpy() for k, v in bench.deltas[0].items()})
    ours = bench.logits(0, pixels)
    merged = fixture["tasks"]["task0"]["peft_model"].merge_and_unload()
    images = [decode(raw[i]) for i in rows]
    pixel_values = bench.processor(images=images, return_tensors="pt")["pixel_values"]
    with torch.no_grad():
        pooled = merged(pixel_values=pixel_values).pooler_output
        emb = torch.nn.functional.normalize(bench.model.visual_projection(pooled), dim=-1)
    torch.testing.assert_close(ours, 100 * emb @ bench.heads[0].T, rtol=1e-4, atol=1e-4)
    for delta, factors in zip(bench.deltas, bench.factors, strict=True):
        for name, (b, a) in factors.items():  # LoraHub's factors multiply to the ΔW
            torch.testing.assert_close(b @ a, delta[name], rtol=1e-5, atol=1e-6)
    calib, test = bench.data(0)
    assert [len(y) for _, y in calib] == [6, 6] and [len(y) for _, y in test] == [12, 12]
    bench.set_delta({})  # back to W0 exactly
    for name, value in bench.base.items():
        torch.testing.assert_close(dict(bench.model.named_parameters())[name], value)


def test_both_jobs_run_end_to_end(files, tmp_path):
    from repro.common.io import read_json

    full_step(files, SETTINGS, RULES, "cpu", tmp_path / "individual.json")
    individual = read_json(tmp_path / "individual.json")
    assert len(individual["individual"]) == 2
    assert all(0 <= a <= 1 for a in individual["zero_shot"] + individual["individual"])

    def run(method):
        out = tmp_path / f"{method}.json"
        full_step(files, SETTINGS, RULES, "cpu", out, method=method, individual=individual_path)
        return read_json(out)["runs"]

    individual_path = tmp_path / "individual.json"
    runs = run("ta_tuned")
    assert [r["seed"] for r in runs] == [0, 1]
    for r in run("malora"):
        assert "error" not in r and r["calibration_evaluations"] == 0
        assert len(r["alphas"]) == 2 and min(r["alphas"]) > 0
    for r in runs:
        assert r["calibration_evaluations"] == 2
        expected = np.mean(np.array(r["task_accuracy"]) / individual["individual"])
        assert r["normalised_accuracy"] == pytest.approx(expected)
    for r in run("lorahub"):  # A and B combined separately: no per-task weight of ΔW
        assert r["alphas"] is None and r["calibration_evaluations"] == 2
        assert len(r["tuned"]["weights"]) == 2


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
    loaded, factors = load_adapter_peft(*files, target, names)
    assert not any("lora_" in n for n, _ in target.named_parameters())  # unloaded again
    reference = lora_deltas(source, "default")
    assert len(loaded) == len(reference) == 2 * 2
    for name, value in reference.items():
        torch.testing.assert_close(loaded[f"vision_model.{name}"], value, rtol=1e-5, atol=1e-6)
    for name, (b, a) in factors.items():  # per-layer ranks and scalings in the factors
        torch.testing.assert_close(b @ a, loaded[name], rtol=1e-5, atol=1e-6)
    dense = load_factors(*files, names)  # one alpha / r for every layer: wrong for v_proj
    v = next(k for k in reference if "v_proj" in k)
    b, a = dense[f"vision_model.{v}"]
    assert not torch.allclose(b @ a, reference[v])


def test_peft_loader_refuses_an_adapter_whose_keys_miss_the_model(fixture, tmp_path):
    from transformers import CLIPTextModel

    from repro.malora.fullscale_data import load_adapter_peft

    clip = fixture["clip"]
    text = CLIPTextModel(clip.config.text_config)  # no vision layers for the adapter's keys
    names = [n for n, _ in clip.named_parameters()]
    with pytest.raises(KeyError, match="LoRA modules in the file"):
        load_adapter_peft(*fixture["tasks"]["task0"]["adapter"], text, names)
