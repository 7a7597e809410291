"""Every seed key of every paper, in config.yaml, test.yaml and full.yaml, names the test that
changes it and sees what it seeds change (issue 34 §3: a seed fixed in code, or a key that
reaches nothing, is a verdict no overlay can move). A new seed key fails here until it is
listed with its test; a key named like a seed that is not one is listed apart, with why."""

from __future__ import annotations

import ast

import pytest
import yaml

from tests.conftest import ROOT
from tests.seed_keys import pattern, seed_paths

CONFIGS = ("config.yaml", "test.yaml", "full.yaml")

SEED_TESTS = {
    "qsurv": {
        "seeds": "tests/qsurv/test_seeds.py::test_a_seed_key_changes_the_result",
        "real_datasets.<name>.seeds": (
            "tests/qsurv/test_seeds.py::test_a_seed_key_changes_the_result"
        ),
        "claims.<name>.registered_seeds": (
            "tests/common/test_controls.py::test_verdict_at_registered_seeds_against_scipy"
        ),
    },
    "plsa": {
        "estimator_study.first_seed": (
            "tests/plsa/test_seeds.py::test_first_seed_moves_every_repetition"
        ),
        # the shift study is the same study code (repro.plsa.study.run) on other settings
        "shift_study.first_seed": (
            "tests/plsa/test_seeds.py::test_first_seed_moves_every_repetition"
        ),
        "end_to_end.seeds": "tests/plsa/test_seeds.py::test_end_to_end_seed_moves_the_run",
        "claims.<name>.bootstrap.seed": (
            "tests/plsa/test_seeds.py::test_bootstrap_seed_and_registered_seeds_move_the_claim"
        ),
        "claims.<name>.registered_seeds": (
            "tests/plsa/test_seeds.py::test_bootstrap_seed_and_registered_seeds_move_the_claim"
        ),
    },
    "sbd": {
        "datasets.<name>.seed": (
            "tests/sbd/test_sbd_seeds.py::test_changing_a_seed_changes_what_it_seeds"
        ),
        "noise_study.seeds": (
            "tests/sbd/test_sbd_seeds.py::test_changing_a_seed_changes_what_it_seeds"
        ),
        "sign_study.seeds": (
            "tests/sbd/test_sbd_seeds.py::test_changing_a_seed_changes_what_it_seeds"
        ),
        "scaling_study.graph.seed": (
            "tests/sbd/test_sbd_seeds.py::test_changing_a_seed_changes_what_it_seeds"
        ),
        "greedy.minhash_seed": (
            "tests/sbd/test_sbd_seeds.py::test_changing_a_seed_changes_what_it_seeds"
        ),
        "evaluation.operand_seed": (
            "tests/sbd/test_sbd_seeds.py::"
            "test_the_evaluation_step_takes_its_operand_from_the_config"
        ),
    },
    "delta_mem": {
        "seeds": (
            "tests/delta_mem/test_episodes_train.py::"
            "test_the_run_seed_draws_the_backbone_and_the_training_batches"
        ),
        # a method's own seed list: the same run seed, for fewer runs than the main methods
        "methods.<name>.seeds": (
            "tests/delta_mem/test_episodes_train.py::"
            "test_the_run_seed_draws_the_backbone_and_the_training_batches"
        ),
        "evaluation.seed": (
            "tests/delta_mem/test_conditions.py::test_the_evaluation_seed_changes_the_result"
        ),
        "full_scale.locomo.seed": (
            "tests/delta_mem/test_locomo_fullscale.py::test_conditions_on_a_tiny_qwen3"
        ),
    },
    "helpful_only": {
        "seeds": "tests/helpful_only/test_seeds.py::test_the_configured_seed_decides_the_run",
        "full_scale.seeds": (
            "tests/helpful_only/test_fullscale_mitigations.py::"
            "test_an_arm_trains_on_exactly_its_mitigations_ar_rows"
        ),
    },
    "st_reliability": {
        "seeds": "tests/st_reliability/test_seeds.py::test_model_seed_changes_the_trained_model",
        "simulator.seed": (
            "tests/st_reliability/test_seeds.py::test_simulator_seed_changes_the_cells"
        ),
        "datasets.<name>.seed": (
            "tests/st_reliability/test_seeds.py::test_split_seed_changes_the_held_out_perturbations"
        ),
        "datasets.<name>.coverage.seed": (
            "tests/st_reliability/test_coverage.py::test_seed_changes_the_data"
        ),
        "analysis.bootstrap_seed": (
            "tests/st_reliability/test_seeds.py::test_bootstrap_seed_changes_the_intervals_only"
        ),
        "analysis.control_seed": (
            "tests/st_reliability/test_seeds.py::"
            "test_control_seed_changes_the_permuted_programme_control"
        ),
        "evaluation.planted.seed": (
            "tests/st_reliability/test_planted.py::test_seeds_change_the_planted_parameters"
        ),
        "swap_control.seeds": (
            "tests/st_reliability/test_seeds.py::test_swap_control_seed_changes_the_planted_model"
        ),
        "se600m.seed": (
            "tests/st_reliability/test_se_encoder.py::test_deterministic_and_leaves_caller_rng"
        ),
    },
    "malora": {
        "seeds": "tests/malora/test_studies.py::test_every_seed_changes_its_study",
        "digits.seeds": "tests/malora/test_studies.py::test_every_seed_changes_its_study",
        "claims.<name>.registered_seeds": (
            "tests/malora/test_controls.py::"
            "test_closed_form_is_judged_again_at_the_seeds_registered_first"
        ),
        "full_scale.seeds": (
            "tests/malora/test_fullscale.py::test_the_calibration_draw_follows_the_seed"
        ),
        "full_scale.backbones.<name>.tasks.<name>.holdout.seed": (
            "tests/malora/test_fullscale.py::test_holdout_is_knots_split_of_the_test_rows"
        ),
    },
    "r3_adapter": {
        "seeds": "tests/r3_adapter/test_seeds.py::test_changing_a_seed_changes_what_it_seeds",
        "pretraining.seed": (
            "tests/r3_adapter/test_seeds.py::test_changing_a_seed_changes_what_it_seeds"
        ),
        "low_light.cast_seed": (
            "tests/r3_adapter/test_seeds.py::test_changing_a_seed_changes_what_it_seeds"
        ),
        "full_scale.seeds": (
            "tests/r3_adapter/test_fullscale_run.py::test_pairs_split_by_sequence_per_seed"
        ),
    },
}

# named like a seed, but not a source of randomness
NOT_SEEDS = {
    "degree_seeds": "SBD: the number of highest-degree start rows per round, a count",
    "failed_seed": "MaLoRA: how a seed without an α is scored (loss or fallback), a treatment",
    "ablation_seed": "δ-Mem: which run the ablation figure draws; the config check requires "
    "it among the method's seeds",
}


def _keys(paper: str) -> dict[str, set[str]]:
    """Per config file, the seed-key patterns of the paper's section."""
    found = {}
    for name in CONFIGS:
        section = yaml.safe_load((ROOT / "config" / name).read_text())["papers"].get(paper, {})
        found[name] = {pattern(p) for p in seed_paths(section) if p[-1] not in NOT_SEEDS}
    return found


@pytest.mark.parametrize("paper", sorted(SEED_TESTS))
def test_every_seed_key_names_its_test(paper):
    keys = _keys(paper)
    unlisted = {name: sorted(k - set(SEED_TESTS[paper])) for name, k in keys.items()}
    assert not any(unlisted.values()), unlisted
    stale = set(SEED_TESTS[paper]) - set().union(*keys.values())
    assert not stale, f"listed but in no config: {sorted(stale)}"


def test_every_paper_of_the_config_is_walked():
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    assert set(config["papers"]) == set(SEED_TESTS)


def test_every_named_test_exists():
    missing = []
    for node in {t for tests in SEED_TESTS.values() for t in tests.values()}:
        path, name = node.split("::")
        tree = ast.parse((ROOT / path).read_text())
        if name not in {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}:
            missing.append(node)
    assert missing == []


def test_the_walk_finds_nested_and_named_keys():
    section = {
        "seeds": [0],
        "claims": {"c1": {"bootstrap": {"seed": 1}, "registered_seeds": [0]}},
        "full_scale": {"backbones": {"b": {"tasks": {"t": {"holdout": {"seed": 2}}}}}},
        "greedy": {"degree_seeds": 4, "width": 3},
        "seed_note": "a key named like a seed at any depth is found",
    }
    assert {pattern(p) for p in seed_paths(section)} == {
        "seeds",
        "claims.<name>.bootstrap.seed",
        "claims.<name>.registered_seeds",
        "full_scale.backbones.<name>.tasks.<name>.holdout.seed",
        "greedy.degree_seeds",
        "seed_note",
    }
