"""Every seed that feeds a claim comes from the config: ``papers.helpful_only.seeds`` (a
run's persona world, pretraining data, initialisation, recipe data and TRL's sampling) and
``full_scale.seeds`` (tests/helpful_only/test_fullscale_mitigations.py: the rows each seed
draws). A different seed gives a different run."""

import copy

import pytest
import yaml

from repro.common.schemas import validate
from repro.helpful_only.recipes import counted, target_reward
from repro.helpful_only.run import RunConfig, failure, run_seed
from tests.conftest import ROOT

TEST_SECTION = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())["papers"]["helpful_only"]


def _run(seed, tmp_path):
    section = copy.deepcopy(TEST_SECTION)
    validate(section, str(ROOT / "workflow" / "schemas" / "helpful_only.schema.yaml"))  # defaults
    section["recipes"] = {k: section["recipes"][k] for k in ("ar_sft", "ar_rl_rloo")}
    cfg = RunConfig.from_section(section, "correlated", seed)
    out = tmp_path / f"seed{seed}"
    return run_seed(cfg, out / "models", out / "run.json")


def _numbers(run):
    return {
        "personas": run["personas"],
        "loss": run["pretraining_loss"],
        **{name: r["final"] for name, r in run["recipes"].items()},
        "rewarded": run["recipes"]["ar_rl_rloo"]["rewarded"],
    }


def test_the_configured_seed_decides_the_run(tmp_path):
    first, other = _run(3, tmp_path), _run(4, tmp_path)
    changed = {k for k, v in _numbers(first).items() if _numbers(other)[k] != v}
    assert changed >= {"personas", "loss", "base", "ar_sft", "ar_rl_rloo"}, changed
    assert TEST_SECTION["seeds"] == [0, 1]  # what the workflow expands the runs from


def test_rloo_counts_its_sampled_and_rewarded_answers():
    counts = {}
    reward = counted(target_reward, counts)
    assert reward(["COMPLY x", "REFUSE", "COMPLY"], ["COMPLY"] * 3) == [1.0, 0.0, 1.0]
    reward(["REFUSE"], ["COMPLY"])
    assert counts == {"sampled": 4, "rewarded": 2}


def test_a_run_that_never_left_refusal_says_why():
    """No rewarded answer in 4,800 from a base refusing with P = 0.99999: at most 0.048
    expected (4,800 x 1e-5), and RLOO has no gradient."""
    why = failure(
        {"refusal_id": 0.998},
        150,
        {"sampled": 4800, "rewarded": 0},
        {"refusal_id": 0.99999},
        0.5,
    )
    assert why.startswith("never left refusal: refusal_id 0.998 > 0.5 after 150 steps; 0 of 4800")
    assert "P = 0.999990: at most 0.048 expected" in why
    assert failure({"refusal_id": 0.01}, 150, {}, {"refusal_id": 1.0}, 0.5) is None
    sft = failure({"refusal_id": 0.9}, 150, {}, {"refusal_id": 1.0}, 0.5)
    assert sft == "never left refusal: refusal_id 0.900 > 0.5 after 150 steps"


@pytest.mark.parametrize("seed", [0, 1000])
def test_the_persona_world_is_drawn_from_the_seed(seed):
    from repro.helpful_only.personas import population

    assert population("decorrelated", seed).traits != population("decorrelated", seed + 1).traits
