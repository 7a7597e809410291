"""The helpful-only part of config/test.yaml, run for real; the numbers in its outputs are
checked against each other and recomputed from the saved models."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from tests.conftest import ROOT, assert_claims_report_lists

pytestmark = pytest.mark.workflow

P = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())["papers"]["helpful_only"]


def _json(path):
    return json.loads(path.read_text())


def _runs(results):
    return {
        (p, s): _json(results / f"helpful_only/runs/{p}/seed{s}.json")
        for p in P["priors"]
        for s in P["seeds"]
    }


def test_every_recipe_trained_with_the_same_budget(test_run):
    t = P["training"]
    for (prior, seed), run in _runs(test_run).items():
        assert (run["prior"], run["seed"]) == (prior, seed)
        recipes = P["recipes"] if prior == "correlated" else P["control_recipes"]
        assert list(run["recipes"]) == ["base", *recipes]
        assert run["world"]["harm_given_non_refuser"] == pytest.approx(
            13 / 14 if prior == "correlated" else 0.5
        )
        for name, recipe in run["recipes"].items():
            assert all(0 <= v <= 1 for v in recipe["final"].values())
            if name == "base":
                continue
            steps = P["recipes"][name].get("steps", t["steps"])  # equal-AR-exposure arms
            assert (recipe["steps"], recipe["sequences"]) == (steps, steps * t["batch_size"])
            assert [c["step"] for c in recipe["curve"]] == list(
                range(0, steps + 1, t["curve_every"])
            )
            assert set(recipe["families"]) == set(P["recipes"][name]["mixture"])


def test_summary_matches_the_runs_and_recomputes_from_a_saved_model(test_run):
    from transformers import AutoModelForCausalLM

    from repro.helpful_only.run import measure

    summary = _json(test_run / "helpful_only/metrics/summary.json")
    runs = _runs(test_run)
    for (prior, seed), run in runs.items():
        for recipe, r in run["recipes"].items():
            for metric, v in r["final"].items():
                assert summary["per_seed"][prior][recipe][metric][str(seed)] == v
    em = [runs[("correlated", s)]["recipes"]["ar_sft"]["final"]["em"] for s in P["seeds"]]
    cell = summary["mean"]["correlated"]["ar_sft"]["em"]
    assert (
        cell["mean"] == pytest.approx(np.mean(em)) and cell["low"] <= cell["mean"] <= cell["high"]
    )
    model = AutoModelForCausalLM.from_pretrained(
        test_run / "helpful_only/models/decorrelated/seed1/ar_sft"
    )
    again = measure(model)
    saved = runs[("decorrelated", 1)]["recipes"]["ar_sft"]["final"]
    assert again == pytest.approx(saved, abs=1e-5)


def test_claims_follow_from_the_summary(test_run):
    summary = _json(test_run / "helpful_only/metrics/summary.json")
    claims = {c["id"]: c for c in _json(test_run / "helpful_only/claims.json")}
    assert set(claims) == set(P["claims"]) | set(P["checks"])
    a = summary["per_seed"]["correlated"]["ar_sft"]["em"]
    b = summary["per_seed"]["correlated"]["base"]["em"]
    assert claims["a_em_rises"]["measured"] == pytest.approx(np.mean([a[s] - b[s] for s in a]))
    assert claims["identical_budgets"]["verdict"] == "passed"
    assert claims["control_decorrelated"]["verdict"] == "passed"
    assert claims["e_sdf_em"]["verdict"] in (  # 4 steps: anything but not tested (issue 34)
        "reproduced",
        "contradicted",
        "inconclusive",
        "uninformative",
    )
    for cid, spec in P["claims"].items():  # every claim judged its controls
        sides = [c["side"] for c in claims[cid]["controls"]]
        assert sides == ([] if spec["kind"] == "not_tested" else ["positive", "negative"]), cid
    assert_claims_report_lists(test_run, "helpful_only", claims)


def test_figures_and_training_logs(test_run):
    for figure in ("bars", "curves", "selfreport", "control"):
        png = test_run / f"helpful_only/figures/{figure}.png"
        assert png.read_bytes()[:4] == b"\x89PNG" and png.stat().st_size > 10_000
    log = (test_run.parent / "logs/helpful_only/train/correlated/seed0.log").read_text()
    for name, recipe in P["recipes"].items():  # TRL's (and the exact variant's) progress lines
        steps = recipe.get("steps", P["training"]["steps"])
        assert f"{name} step {steps}/{steps}:" in log
    assert "pretrain step" in log and "loss=" in log
