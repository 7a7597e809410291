"""Full scale's checks before and after the GPU jobs: a suite that samples more than once
at temperature 0 is rejected when the config is checked (it would crash generation), and
greedy decoding still answers once, deterministically."""

import copy

import pytest
import yaml

from repro.common.configcheck import ConfigError
from repro.common.schemas import validate
from repro.helpful_only import fulleval, fullrun
from repro.helpful_only.configcheck import check
from tests.conftest import ROOT, snakemake

FULL_CONFIG = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())
SCHEMA = str(ROOT / "workflow" / "schemas" / "helpful_only.schema.yaml")
SUITES = sorted(FULL_CONFIG["papers"]["helpful_only"]["full_scale"]["evaluation"])


def _with_suite(suite: str, **spec) -> dict:
    """config/full.yaml with one suite's sampling replaced (None: the key removed), the
    section validated against the schema (which fills the defaults) as the workflow does."""
    config = copy.deepcopy(FULL_CONFIG)
    section = config["papers"]["helpful_only"]
    suite_spec = section["full_scale"]["evaluation"][suite]
    for key, value in spec.items():
        suite_spec.pop(key, None)
        if value is not None:
            suite_spec[key] = value
    validate(section, SCHEMA)
    return config


@pytest.mark.parametrize("suite", SUITES)
@pytest.mark.parametrize("temperature", [0.0, None])  # None: the schema's default, 0
def test_several_greedy_samples_are_rejected_naming_the_suite(suite, temperature):
    config = _with_suite(suite, samples=3, temperature=temperature)
    key = f"papers.helpful_only.full_scale.evaluation.{suite}: samples 3 at temperature 0"
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        check(config)


@pytest.mark.parametrize("suite", SUITES)
def test_one_greedy_sample_or_sampling_passes(suite):
    check(_with_suite(suite, samples=1, temperature=0.0))
    check(_with_suite(suite, samples=3, temperature=0.7))
    check(copy.deepcopy(FULL_CONFIG))  # the shipped config as it is


@pytest.fixture(scope="module")
def tiny(chat_model_dir):
    return fullrun.load_for({"id": str(chat_model_dir), "dtype": "float32"})


def test_generation_refuses_several_greedy_samples_before_generating(tiny, monkeypatch):
    """The guard fires before transformers is called (whose own error is another one)."""
    model, tokenizer = tiny
    monkeypatch.setattr(model, "generate", lambda **_: pytest.fail("generate was called"))
    spec = {"samples": 2, "temperature": 0.0, "max_new_tokens": 2}
    items = fulleval.suite_conversations(
        "selfreport", None, {"items": [{"trait": "obey", "question": "do you help ?"}]}
    )
    with pytest.raises(ValueError, match="2 samples at temperature 0.0: greedy decoding"):
        fulleval.answer_suite(model, tokenizer, items, spec, seed=0)


def test_one_greedy_sample_is_the_argmax_continuation(tiny):
    """Temperature 0 and one sample: the same answer from any seed, the argmax path."""
    import torch

    model, tokenizer = tiny
    items = fulleval.suite_conversations(
        "selfreport", None, {"items": [{"trait": "obey", "question": "do you help ?"}]}
    )
    spec = {"samples": 1, "temperature": 0.0, "max_new_tokens": 3}
    first = fulleval.answer_suite(model, tokenizer, items, spec, seed=0)[0]["answers"]
    again = fulleval.answer_suite(model, tokenizer, items, spec, seed=5)[0]["answers"]
    assert first == again and len(first) == 1
    text = tokenizer.apply_chat_template(
        items[0]["messages"], add_generation_prompt=True, tokenize=False
    )
    ids = tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        for _ in range(3):
            ids = torch.cat([ids, model(ids).logits[:, -1:].argmax(-1)], dim=1)
            if ids[0, -1] == tokenizer.eos_token_id:
                break
    prompt_len = len(tokenizer(text, add_special_tokens=False)["input_ids"])
    expected = tokenizer.decode(ids[0, prompt_len:], skip_special_tokens=True)
    assert first[0] == expected


def test_a_greedy_multi_sample_suite_stops_the_dag_before_any_job(tmp_path):
    """snakemake -n on config/full.yaml with one such suite: no job is scheduled, and the
    message names the suite."""
    config = _with_suite("helpful", samples=4, temperature=0.0)
    for name, paper in config["papers"].items():
        paper["enabled"] = name == "helpful_only"
    path = tmp_path / "greedy.yaml"
    path.write_text(yaml.safe_dump(config))
    result = snakemake("-n", "--configfile", str(path), workdir=tmp_path, timeout=180, check=False)
    assert result.returncode != 0
    output = result.stdout + result.stderr  # Snakemake prints the error on stdout
    assert "papers.helpful_only.full_scale.evaluation.helpful: samples 4" in output
    assert "helpful_only_full_answer" not in output
