"""Claims follow from the metrics documents; config cross-checks name the bad key."""

from __future__ import annotations

import copy
import math

import pytest
import yaml

from repro.common.configcheck import ConfigError
from repro.common.io import write_json
from repro.delta_mem import claims, configcheck
from tests.conftest import ROOT

CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
SPECS = CONFIG["papers"]["delta_mem"]["claims"]


def _metrics(method, kind, acc: dict, change=0.0, seeds=(0, 1)):
    """A metrics document with the same accuracies at every seed."""
    row = {
        "accuracy": {c: {str(n): v for n, v in by_n.items()} for c, by_n in acc.items()},
        "train": {"backbone_max_change": change},
    }
    flat = {f"{c}/{n}": v for c, by_n in acc.items() for n, v in by_n.items()}
    return {
        "method": method,
        "kind": kind,
        "seeds": list(seeds),
        "episodes": 1000,
        "per_seed": [{**row, "seed": s} for s in seeds],
        "mean": flat,
        "std": dict.fromkeys(flat, 0.0),
    }


def _write(tmp_path, state_only, full_state, change=0.0):
    facts = (1, 2, 4, 8)
    dm = {
        "truncated": dict.fromkeys(facts, 0.06),
        "zeroed": dict.fromkeys(facts, 0.06),
        "other_state": dict.fromkeys(facts, 0.07),
        "full": dict.fromkeys(facts, 1.0),
        "state_only": dict(zip(facts, state_only, strict=True)),
        "full_state": dict(zip(facts, full_state, strict=True)),
        "capability": dict.fromkeys(facts, 0.995),
    }
    lora = {
        "truncated": dm["truncated"],
        "full": dm["full"],
        "lora": dict.fromkeys(facts, 0.08),
        "capability": dict.fromkeys(facts, 0.9),
    }
    paths = {}
    for name, kind, acc in (("delta_mem", "delta_mem", dm), ("delta_mem_lora", "lora", lora)):
        paths[name] = tmp_path / f"{name}.json"
        write_json(paths[name], _metrics(name, kind, acc, change))
    return paths


def test_verdicts_follow_the_numbers(tmp_path):
    paths = _write(tmp_path, (0.9, 0.5, 0.3, 0.15), (1.0, 1.0, 0.995, 0.6))
    out = {c.id: c for c in claims.check_claims(SPECS, paths, tmp_path / "claims.json")}
    N = 2000
    z = (0.3 - 0.06) / math.sqrt((0.3 * 0.7 + 0.06 * 0.94) / N)  # worst n_facts ≤ 4 is 4
    assert out["memory_only_gain"].measured == pytest.approx(z)
    assert out["memory_only_gain"].verdict == "reproduced"
    assert out["gain_from_state"].measured == 0.0
    assert out["full_state_no_harm"].measured == pytest.approx(-0.4)  # n_facts = 8 counts
    assert out["full_state_no_harm"].verdict == "not reproduced"
    assert out["lora_near_chance"].measured == pytest.approx(0.08 - 1 / 16)
    assert out["capability_preserved"].measured == pytest.approx(0.995)
    assert out["frozen_backbone"].verdict == "reproduced"
    assert out["trainable_parameters"].measured == pytest.approx(abs(4_866_336 - 4.87e6) / 4.87e6)
    assert out["locomo_gain"].verdict == "not tested at this scale"
    # ratio of means over n_facts ≤ 6: (1 + 1 + 0.995) / 3
    assert "full_state/full (ratio of mean accuracies over n_facts [1, 2, 4]): 1.00" in (
        out["locomo_gain"].details
    )
    assert (tmp_path / "claims.json").exists()


def test_a_moved_backbone_fails(tmp_path):
    paths = _write(tmp_path, (0.9, 0.5, 0.3, 0.15), (1, 1, 1, 1), change=1e-3)
    out = {c.id: c for c in claims.check_claims(SPECS, paths, tmp_path / "claims.json")}
    assert out["frozen_backbone"].verdict == "not reproduced"


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda p: p["backbone"].update(max_positions=20), "max_positions"),
        (lambda p: p["figures"].update(baseline="delta_mem"), "figures.baseline"),
        (
            lambda p: p["claims"]["lora_near_chance"].update(method="delta_mem"),
            "claims.lora_near_chance.method",
        ),
        (
            lambda p: p["claims"]["memory_only_gain"].update(method="nope"),
            "claims.memory_only_gain.method",
        ),
        (
            lambda p: p["claims"]["locomo_gain"].update(metric="state_only-truncated"),
            "claims.locomo_gain.metric",
        ),
        (lambda p: p["methods"]["delta_mem_r4"].update(seeds=[1]), "ablation_seed"),
        (
            lambda p: p["claims"]["gain_from_state"].update(kind="rate_slope"),
            "claims.gain_from_state.kind",
        ),
    ],
)
def test_bad_config_names_the_key(edit, key):
    config = copy.deepcopy(CONFIG)
    edit(config["papers"]["delta_mem"])
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        configcheck.check(config)


def test_shipped_configs_pass():
    for name in ("config.yaml", "test.yaml", "full.yaml"):
        configcheck.check(yaml.safe_load((ROOT / "config" / name).read_text()))


FULL = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())


@pytest.mark.parametrize(
    ("field", "value", "key"),
    [
        ("dataset", "llama", "claims.locomo_gain.dataset"),
        ("method", "tuned", "claims.locomo_gain.method"),
        ("metric", "full/full_state", "claims.locomo_gain.metric"),
    ],
)
def test_bad_locomo_claim_names_the_key(field, value, key):
    config = copy.deepcopy(FULL)
    config["papers"]["delta_mem"]["claims"]["locomo_gain"][field] = value
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        configcheck.check(config)


def test_locomo_ratio_from_the_full_scale_summary(tmp_path):
    paths = _write(tmp_path, (0.9, 0.5, 0.3, 0.15), (1, 1, 1, 1))
    f1 = {
        "base/truncated": {"overall": 0.06, "n": 10},
        "base/full": {"overall": 0.40, "n": 10},
        "released/state_only": {"overall": 0.12, "n": 10},
        "released/full_state": {"overall": 0.38, "n": 10},
    }
    write_json(tmp_path / "qwen3_4b.json", {"backbone": "qwen3_4b", "f1": f1})
    specs = {
        k: v
        for k, v in FULL["papers"]["delta_mem"]["claims"].items()
        if k in ("locomo_gain", "locomo_state_only_gain", "locomo_gain_trained")
    }
    specs["locomo_gain_trained"] = {**specs["locomo_gain_trained"], "dataset": "qwen3_8b"}
    out = {
        c.id: c
        for c in claims.check_claims(
            specs, paths, tmp_path / "c.json", {"qwen3_4b": tmp_path / "qwen3_4b.json"}
        )
    }
    assert out["locomo_gain"].measured == pytest.approx(0.38 / 0.40)
    assert out["locomo_gain"].verdict == "not reproduced"  # 0.95 < 1.1
    assert out["locomo_state_only_gain"].measured == pytest.approx(2.0)
    assert out["locomo_gain_trained"].verdict == "not tested at this scale"
