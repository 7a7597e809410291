"""The NLI benchmark's loaders and job on a tiny local Llama with KnOTS-format SEQ_CLS
adapters (no network): the tokenised splits are the files' rows as the model's tokenizer
encodes them, KnOTS's one-file split is ``datasets``' own, adapters and heads load as peft
holds them, the bench's logits are peft's merged model's, and both jobs run end to end."""

import copy
import json

import numpy as np
import pandas as pd
import pytest
import torch

from repro.malora.fullscale_data import load_factors, load_head
from repro.malora.nli_data import load_tokenizer, prepare_task, read_rows
from repro.malora.peft_merge import base_state, lora_deltas
from repro.malora.steps import full_config, full_step, nli_tokenise_step
from tests.malora.nli_fixture import tiny_nli_fixture

RULES = {
    "methods": {
        "ta_tuned": {"rule": "task_arithmetic", "tune": True},
        "malora": {"rule": "malora"},
    },
    "scale_grid": [0.5, 1.0],
}
SETTINGS = {"seeds": [0, 1], "calibration_per_task": 6, "margin": {"stat": "softmin"}}


@pytest.fixture(scope="module")
def nli(tmp_path_factory):
    root = tmp_path_factory.mktemp("nli")
    fixture = tiny_nli_fixture(root)
    files = {"kind": "nli", "model_dir": fixture["model_dir"], "batch_size": 5, "tasks": {}}
    for name, task in fixture["tasks"].items():
        spec = {k: v for k, v in task.items() if k not in ("adapter", "peft_model")}
        nli_tokenise_step(spec, fixture["model_dir"], root / f"{name}.json")
        files["tasks"][name] = {"adapter": task["adapter"], "data": str(root / f"{name}.json")}
    return {**fixture, "files": files, "tokenizer": load_tokenizer(fixture["model_dir"])}


def _spec(nli, name):
    return {k: v for k, v in nli["tasks"][name].items() if k not in ("adapter", "peft_model")}


def test_tokenised_splits_are_the_files_rows(nli):
    spec, tokenizer = _spec(nli, "three"), nli["tokenizer"]
    doc = prepare_task(spec, nli["model_dir"])
    assert doc["classes"] == [0, 1, 2]
    for part, path in (("calibration", spec["calibration"][0]), ("test", spec["test"][0])):
        frame = pd.read_parquet(path)
        frame = frame[frame.label >= 0]  # SNLI's unlabelled rows are dropped
        assert doc[part]["labels"] == frame.label.tolist()
        expected = tokenizer(frame.premise.tolist(), frame.hypothesis.tolist())["input_ids"]
        assert doc[part]["input_ids"] == expected
        assert all(ids[0] == tokenizer.bos_token_id and ids.count(1) == 2 for ids in expected)


def test_one_labelled_split_is_divided_as_knots_divides_it(nli):
    from datasets import Dataset

    spec = _spec(nli, "binary")
    doc = prepare_task(spec, nli["model_dir"])
    assert doc["classes"] == [0, 2]  # "yes" → 0, "no" → 2 of the 3-way head
    frame = pd.read_json(spec["test"][0], lines=True)
    reference = Dataset.from_pandas(frame).train_test_split(test_size=0.25, shuffle=True, seed=42)
    for part, ref in (("calibration", reference["test"]), ("test", reference["train"])):
        ids = nli["tokenizer"](list(ref["text1"]), list(ref["text2"]))["input_ids"]
        assert doc[part]["input_ids"] == ids
        assert doc[part]["labels"] == [{"yes": 0, "no": 2}[v] for v in ref["label"]]
    assert len(doc["calibration"]["labels"]) + len(doc["test"]["labels"]) == len(frame)


def test_bad_inputs_are_errors_naming_the_file(nli, tmp_path):
    spec = _spec(nli, "three")
    with pytest.raises(KeyError, match="three_test.parquet.*sentence_A"):
        read_rows(spec["test"], ["sentence_A", "hypothesis"])
    (tmp_path / "split.csv").write_text("premise,hypothesis,label\n")
    with pytest.raises(ValueError, match="split.csv"):
        read_rows([tmp_path / "split.csv"], ["premise", "hypothesis"])
    with pytest.raises(ValueError, match="no calibration rows"):
        prepare_task({**spec, "labels": {"7": 0, "8": 1}}, nli["model_dir"])
    with pytest.raises(FileNotFoundError, match="nowhere.*config.json missing"):
        nli_tokenise_step(spec, tmp_path / "nowhere", tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


def test_adapters_and_heads_load_as_peft_holds_them(nli):
    names = list(base_state(nli["tasks"]["three"]["peft_model"]))  # the plain model's names
    for task in nli["tasks"].values():
        deltas = {k: b @ a for k, (b, a) in load_factors(*task["adapter"], names).items()}
        reference = lora_deltas(task["peft_model"], "default")
        assert set(deltas) == set(reference) and len(deltas) == 2 * 4  # 2 layers × q, k, v, o
        for name, value in reference.items():
            torch.testing.assert_close(deltas[name], value, rtol=1e-5, atol=1e-6)
        score = task["peft_model"].base_model.model.score.modules_to_save["default"].weight
        torch.testing.assert_close(load_head(task["adapter"][1]), score.detach())


def test_an_adapter_without_a_head_is_an_error(nli, tmp_path):
    state = torch.load(nli["tasks"]["three"]["adapter"][1], weights_only=True)
    torch.save({k: v for k, v in state.items() if "lora_" in k}, tmp_path / "adapter_model.bin")
    with pytest.raises(ValueError, match="expected one 'score' head"):
        load_head(tmp_path / "adapter_model.bin")


def _reference_logits(nli, name, ids, classes):
    """The task's peft model with its adapter merged (a copy), one unpadded pair at a time."""
    merged = nli.setdefault("merged", {})
    if name not in merged:
        merged[name] = copy.deepcopy(nli["tasks"][name]["peft_model"]).merge_and_unload()
    with torch.no_grad():
        rows = [merged[name](input_ids=torch.tensor([i])).logits[0] for i in ids]
    return torch.stack(rows)[:, classes]


def test_bench_logits_are_the_merged_peft_models(nli):
    from repro.malora.nli_bench import NliBench

    bench = NliBench(full_config(nli["files"], SETTINGS, RULES, nli["model_dir"], "cpu"))
    calib, test = bench.data(0)
    for t, name in enumerate(nli["tasks"]):
        bench.set_delta({k: v.numpy() for k, v in bench.deltas[t].items()})
        ids = test[t][0]
        expected = _reference_logits(nli, name, ids, bench.classes[t])
        torch.testing.assert_close(bench.logits(t, ids), expected, rtol=1e-4, atol=1e-5)
        assert len(calib[t][0]) == 6 and set(test[t][1]) <= set(range(len(bench.classes[t])))
    bench.set_delta({})  # back to W0 exactly
    for name, value in bench.base.items():
        torch.testing.assert_close(dict(bench.model.named_parameters())[name], value)


def test_nli_jobs_run_end_to_end(nli, tmp_path):
    files = nli["files"]
    full_step(files, SETTINGS, RULES, "cpu", tmp_path / "individual.json")
    individual = json.loads((tmp_path / "individual.json").read_text())
    assert individual["tasks"] == ["three", "binary"]
    for t, name in enumerate(individual["tasks"]):  # each adapter alone, through peft itself
        doc = json.loads(open(files["tasks"][name]["data"]).read())
        logits = _reference_logits(nli, name, doc["test"]["input_ids"], doc["classes"])
        y = np.searchsorted(doc["classes"], doc["test"]["labels"])
        accuracy = float((logits.argmax(1).numpy() == y).mean())
        assert individual["individual"][t] == pytest.approx(accuracy)
        assert individual["individual"][t] > individual["zero_shot"][t]  # trained on its task
    for method in RULES["methods"]:
        out = tmp_path / f"{method}.json"
        full_step(
            files,
            SETTINGS,
            RULES,
            "cpu",
            out,
            method=method,
            individual=out.parent / "individual.json",
        )
        runs = json.loads((tmp_path / f"{method}.json").read_text())["runs"]
        assert [r["seed"] for r in runs] == [0, 1]
        for r in runs:
            assert "error" not in r and len(r["alphas"]) == 2
            expected = np.mean(np.array(r["task_accuracy"]) / individual["individual"])
            assert r["normalised_accuracy"] == pytest.approx(expected)
            assert r["calibration_evaluations"] == (0 if method == "malora" else 2)
