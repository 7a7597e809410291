"""Claims and checks follow from the metrics documents, each claim can come out contradicted
(a check: failed), an interval too wide to tell is inconclusive, a missing value is "not
reproduced"; explorations never decide a verdict; every margin is in the config; config
cross-checks name the bad key. Controls and the per-seed sanity: test_claims_controls.py."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from repro.common.configcheck import ConfigError
from repro.common.io import write_json
from repro.delta_mem import claims, configcheck
from tests.conftest import ROOT

CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
FULL = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())
SECTION = CONFIG["papers"]["delta_mem"]
SPECS, CHECKS, SANITY = SECTION["claims"], SECTION["checks"], SECTION["sanity"]
FACTS = (1, 2, 4, 8)
SEEDS = (0, 1, 2)
JITTER = {0: 0.01, 1: -0.005, 2: 0.0}  # per-seed noise shared by every condition


def _document(method, kind, acc: dict, change=0.0, seeds=SEEDS, records=None):
    """A metrics document; ``acc[condition][n]`` is a number or a per-seed dict; ``records``
    maps a seed to its rows' ``train`` and ``backbone`` entries (default: a sane run)."""
    records = records or {}

    def value(v, seed):
        return v[seed] if isinstance(v, dict) else v + JITTER[seed]

    rows = [
        {
            "seed": s,
            "accuracy": {
                c: {str(n): value(v, s) for n, v in by_n.items()} for c, by_n in acc.items()
            },
            "train": {"backbone_max_change": change, "final_loss": 0.4}
            | records.get(s, {}).get("train", {}),
            "backbone": {"final_accuracy": 0.996, "steps": 250}
            | records.get(s, {}).get("backbone", {}),
        }
        for s in seeds
    ]
    keys = [(c, n) for c, by_n in acc.items() for n in by_n]
    per = {
        f"{c}/{n}": [
            np.nan if r["accuracy"][c][str(n)] is None else r["accuracy"][c][str(n)] for r in rows
        ]
        for c, n in keys
    }
    return {
        "method": method,
        "kind": kind,
        "seeds": list(seeds),
        "episodes": 1000,
        "per_seed": rows,
        "mean": {k: float(np.mean(v)) for k, v in per.items()},
        "std": {k: float(np.std(v)) for k, v in per.items()},
    }


def _good():
    """Numbers under which every claim and check holds."""
    dm = {
        "truncated": dict.fromkeys(FACTS, 0.06),
        "zeroed": dict.fromkeys(FACTS, 0.06),
        "other_state": dict.fromkeys(FACTS, 0.06),
        "other_replay": dict.fromkeys(FACTS, 0.5),
        "full": dict.fromkeys(FACTS, 0.98),
        "state_only": dict(zip(FACTS, (0.9, 0.5, 0.3, 0.15), strict=True)),
        "history_replay": dict.fromkeys(FACTS, 0.985),
        "official_prompt": dict.fromkeys(FACTS, 0.985),
    }
    lora = {
        "truncated": dm["truncated"],
        "full": dm["full"],
        "lora_truncated": dict.fromkeys(FACTS, 0.07),
        "lora_full": dict.fromkeys(FACTS, 0.9),
    }
    return {"delta_mem": dm, "delta_mem_lora": lora, "delta_mem_full_view": copy.deepcopy(dm)}


def _run(tmp_path, acc, change=0.0, specs=SPECS, checks=CHECKS, records=None, **extra):
    """The claims and checks of the config (its sanity thresholds) on these numbers;
    ``records[method][seed]`` overrides a run's records."""
    paths = {}
    for name, a in acc.items():
        paths[name] = tmp_path / f"{name}.json"
        kind = "lora" if "lora" in name else "delta_mem"
        doc = _document(name, kind, a, change, records=(records or {}).get(name))
        write_json(paths[name], doc)
    out = claims.check_claims(
        specs, paths, tmp_path / "claims.json", checks=checks, sanity=SANITY, **extra
    )
    return {c.id: c for c in out}


def test_every_claim_and_check_holds_on_good_numbers(tmp_path):
    out = _run(tmp_path, _good())
    for cid in ("memory_only_gain", "history_replay_no_harm", "capability_preserved"):
        assert out[cid].verdict == "reproduced", out[cid].details
    assert out["strongest_baseline_gain"].verdict == "reproduced"
    assert out["strongest_baseline_gain"].measured == pytest.approx(0.085)
    # worst n_facts ≤ 4 for the state gain is 4: 0.3 − 0.06, the same at every seed
    assert out["memory_only_gain"].measured == pytest.approx(0.24)
    assert "least favourable: n_facts=4" in out["memory_only_gain"].details
    for cid in CHECKS:
        assert out[cid].type == "check" and out[cid].verdict == "passed", cid
    assert out["trainable_parameters"].measured == pytest.approx(abs(4_866_336 - 4.87e6) / 4.87e6)
    assert out["locomo_gain"].verdict == "not tested at this scale"
    # the embedded analogue, ratio of mean accuracies over n_facts ≤ 6
    assert "official_prompt/full (ratio of mean accuracies over n_facts [1, 2, 4]): 1.01" in (
        out["locomo_gain"].details
    )
    assert (tmp_path / "claims.json").exists()


def _set(acc, method, condition, n, value):
    acc[method][condition][n] = value
    return acc


# each claim, and numbers under which it is contradicted
MUST_FAIL = {
    # the state carries nothing at n_facts = 4 (state-only = truncated at every seed)
    "memory_only_gain": lambda a: _set(a, "delta_mem", "state_only", 4, 0.06),
    # history in the window and in the state below the base by 0.05 at n_facts = 8
    "history_replay_no_harm": lambda a: _set(a, "delta_mem", "history_replay", 8, 0.93),
    # δ-Mem attached loses 0.02 at n_facts = 2: the interval's lower end is below −0.01
    "capability_preserved": lambda a: _set(a, "delta_mem", "official_prompt", 2, 0.96),
    # LoRA-SFT with the history in the window is only 0.005 behind δ-Mem's paper condition at
    # every seed: a gain below the minimum effect (0.01) does not count
    "strongest_baseline_gain": lambda a: {
        **a,
        "delta_mem_lora": {**a["delta_mem_lora"], "lora_full": dict.fromkeys(FACTS, 0.98)},
    },
}


@pytest.mark.parametrize("cid", sorted(MUST_FAIL))
def test_each_claim_can_be_contradicted(tmp_path, cid):
    out = _run(tmp_path, MUST_FAIL[cid](_good()))
    assert out[cid].verdict == "contradicted", out[cid].details
    others = [c for c in MUST_FAIL if c != cid]
    assert all(out[c].verdict == "reproduced" for c in others)


def test_an_interval_that_straddles_the_minimum_effect_is_inconclusive(tmp_path):
    # state-only − truncated at n_facts = 4 per seed: −0.02, +0.005, 0 (interval ±0.033)
    acc = _set(_good(), "delta_mem", "state_only", 4, {0: 0.05, 1: 0.06, 2: 0.06})
    out = _run(tmp_path, acc)["memory_only_gain"]
    assert out.verdict == "inconclusive", out.details
    assert "least favourable: n_facts=4" in out.details and "half-width 0.0329" in out.details


@pytest.mark.parametrize("name", ["config.yaml", "full.yaml", "test.yaml"])
def test_every_margin_is_in_the_config(name):
    """Each paired criterion names δ = 0.01 accuracy (the minimum effect MIN_EFFECTS held in
    the code before issue 34: the same value); the code has no table of its own."""
    section = yaml.safe_load((ROOT / "config" / name).read_text())["papers"]["delta_mem"]
    paired = [s for s in section["claims"].values() if "test" in s.get("criterion", {})]
    assert len(paired) == 4
    assert all(s["criterion"]["delta"] == 0.01 for s in paired)
    assert not hasattr(claims, "MIN_EFFECTS")


@pytest.mark.parametrize("name", ["config.yaml", "full.yaml", "test.yaml"])
def test_every_claim_is_registered_with_its_controls(name):
    section = yaml.safe_load((ROOT / "config" / name).read_text())["papers"]["delta_mem"]
    for cid, spec in section["claims"].items():
        assert len(spec["registered"]) == 10, cid  # YYYY-MM-DD, a string (not a YAML date)
        if spec["kind"] != "not_tested":
            assert set(spec["controls"]) == {"positive", "negative"}, cid
        for revision in spec.get("revised", []):
            assert revision["date"] > spec["registered"], cid


def test_every_configured_claim_has_a_must_fail_case():
    measured = {c for c, s in SPECS.items() if s["kind"] != "not_tested"}
    assert measured == set(MUST_FAIL)


@pytest.mark.parametrize(
    ("cid", "edit"),
    [
        ("gain_from_state", lambda a: _set(a, "delta_mem", "zeroed", 2, 0.07)),
        ("lora_without_history", lambda a: _set(a, "delta_mem_lora", "lora_truncated", 8, 0.2)),
    ],
)
def test_each_check_can_fail(tmp_path, cid, edit):
    assert _run(tmp_path, edit(_good()))[cid].verdict == "failed"


def test_a_moved_backbone_and_a_wrong_count_fail(tmp_path):
    assert _run(tmp_path, _good(), change=1e-3)["frozen_backbone"].verdict == "failed"
    checks = {"trainable_parameters": {**CHECKS["trainable_parameters"], "paper_value": 5_000_000}}
    assert _run(tmp_path, _good(), checks=checks)["trainable_parameters"].verdict == "failed"


def test_an_exploration_is_reported_but_never_decides(tmp_path):
    acc = MUST_FAIL["history_replay_no_harm"](_good())
    acc["delta_mem_full_view"]["history_replay"] = dict.fromkeys(FACTS, 1.0)  # it would pass
    out = _run(tmp_path, acc)["history_replay_no_harm"]
    assert out.verdict == "contradicted"
    assert "Exploration, not the verdict: delta_mem_full_view" in out.details


def test_missing_values_are_not_reproduced_with_the_reason(tmp_path):
    acc = _set(_good(), "delta_mem", "state_only", 2, {0: None, 1: 0.5, 2: 0.5})
    out = _run(tmp_path, acc)["memory_only_gain"]
    assert out.verdict == "not reproduced" and "missing" in out.details


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda p: p["backbone"].update(max_positions=20), "max_positions"),
        (lambda p: p["figures"].update(baseline="delta_mem"), "figures.baseline"),
        (
            lambda p: p["checks"]["lora_without_history"].update(method="delta_mem"),
            "checks.lora_without_history.method",
        ),
        (
            lambda p: p["claims"]["memory_only_gain"].update(method="nope"),
            "claims.memory_only_gain.method",
        ),
        (
            lambda p: p["claims"]["memory_only_gain"].update(
                conditions=["state_only", "capability"]
            ),
            "claims.memory_only_gain.conditions",
        ),
        (
            lambda p: p["claims"]["strongest_baseline_gain"].update(
                baseline_condition="history_replay"
            ),
            "claims.strongest_baseline_gain.baseline_condition",
        ),
        (
            lambda p: p["claims"]["history_replay_no_harm"].update(exploration="delta_mem_lora"),
            "claims.history_replay_no_harm.exploration",
        ),
        (
            lambda p: p["claims"]["locomo_gain"].update(metric="full_state/full"),
            "claims.locomo_gain.metric",
        ),
        (lambda p: p["methods"]["delta_mem_r4"].update(seeds=[1]), "ablation_seed"),
        (
            lambda p: p["checks"]["gain_from_state"].update(kind="rate_slope"),
            "checks.gain_from_state.kind",
        ),
        (
            lambda p: p["claims"]["memory_only_gain"]["criterion"].pop("delta"),
            "claims.memory_only_gain.criterion.delta",
        ),
        (lambda p: p["claims"]["capability_preserved"].pop("controls"), "capability_preserved"),
        (lambda p: p["claims"]["mab_gain"].pop("registered"), "claims.mab_gain.registered"),
        (
            lambda p: p["claims"]["history_replay_no_harm"]["controls"]["negative"].update(
                set={"conditions": ["other_replay", "lora_full"]}
            ),
            "history_replay_no_harm.controls.negative.set.conditions",
        ),
        (lambda p: p["sanity"].update(backbone_accuracy=0.999), "sanity.backbone_accuracy"),
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


@pytest.mark.parametrize(
    ("field", "value", "key"),
    [
        ("dataset", "llama", "claims.locomo_gain.dataset"),
        ("method", "tuned", "claims.locomo_gain.method"),
        ("metric", "full/official_prompt", "claims.locomo_gain.metric"),
        (
            "controls",
            {
                "positive": {
                    "about": "x",
                    "set": {"method": "base", "metric": "state_only/truncated"},
                }
            },
            "claims.locomo_gain.controls.positive.set.metric",
        ),
    ],
)
def test_bad_locomo_claim_names_the_key(field, value, key):
    config = copy.deepcopy(FULL)
    config["papers"]["delta_mem"]["claims"]["locomo_gain"][field] = value
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        configcheck.check(config)


def _full_claims(tmp_path, f1, mab_score):
    write_json(tmp_path / "locomo.json", {"backbone": "qwen3_4b", "f1": f1})
    write_json(tmp_path / "mab.json", {"backbone": "qwen3_4b", "score": mab_score})
    names = ("locomo_gain", "locomo_state_only_gain", "locomo_gain_trained", "mab_gain")
    specs = {k: v for k, v in FULL["papers"]["delta_mem"]["claims"].items() if k in names}
    return _run(
        tmp_path,
        _good(),
        specs=specs,
        checks={},
        locomo_paths={"qwen3_4b": tmp_path / "locomo.json"},
        mab_paths={"qwen3_4b": tmp_path / "mab.json"},
    )


def test_full_scale_ratios_hold_and_fail(tmp_path):
    def f1(released, trained, state_only):
        return {
            "base/truncated": {"overall": 0.06, "n": 10},
            "base/official_prompt": {"overall": 0.40, "n": 10},
            "released/official_prompt": {"overall": released, "n": 10},
            "trained/official_prompt": {"overall": trained, "n": 10},
            "released/state_only": {"overall": state_only, "n": 10},
        }

    def mab(released):
        return {
            "base/truncated": {"overall": 0.1, "n": 10},
            "base/official_prompt": {"overall": 0.5, "n": 10},
            "released/official_prompt": {"overall": released, "n": 10},
        }

    held = _full_claims(tmp_path, f1(0.48, 0.46, 0.12), mab(0.6))
    assert held["locomo_gain"].measured == pytest.approx(1.2)
    assert held["locomo_state_only_gain"].measured == pytest.approx(2.0)
    assert all(c.verdict == "reproduced" for c in held.values())
    for claim in held.values():  # the base's history gain (0.40 / 0.06, 0.5 / 0.1); base / base
        positive, negative = claim.controls
        assert positive["measured"] == pytest.approx(0.40 / 0.06 if "locomo" in claim.id else 5.0)
        assert negative["measured"] == 1.0 and negative["verdict"] == "contradicted"
    failed = _full_claims(tmp_path, f1(0.38, 0.40, 0.05), mab(0.5))  # 0.95×, 1.0×, 0.83×, 1.0×
    assert all(c.verdict == "contradicted" for c in failed.values())
    missing = _full_claims(tmp_path, {"base/official_prompt": {"overall": 0.4, "n": 1}}, {})
    assert all(c.verdict == "not reproduced" for c in missing.values())
    # a benchmark on which the history itself gains nothing cannot show an adapter's gain
    flat = f1(0.48, 0.46, 0.12) | {"base/truncated": {"overall": 0.40, "n": 10}}
    gated = _full_claims(tmp_path, flat, mab(0.6))
    for cid in ("locomo_gain", "locomo_gain_trained"):
        assert gated[cid].verdict == "uninformative" and gated[cid].own_verdict == "reproduced"
        assert "the positive control (the base with the history in its prompt" in gated[cid].details
