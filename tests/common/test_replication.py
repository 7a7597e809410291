"""repro.common.replication: the independent seed set and the comparison of two runs.

* The shipped overlay (config/overlays/seeds_b.yaml) is what the module writes for
  config/config.yaml, and merged as Snakemake merges two --configfiles it moves every seed
  of the config by 1000 and nothing else.
* The overlay of a hand-made config: seeds in mappings, in lists of mappings, the keys that
  are named like seeds but are not random seeds.
* The pooled verdict against scipy's paired t interval on both sets' differences.
"""

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from scipy import stats
from snakemake.utils import update_config

from repro.common.claims import CONTRADICTED, INCONCLUSIVE, REPRODUCED
from repro.common.replication import (
    NOT_RANDOM,
    compare,
    movement,
    overlay,
    pooled,
    seed_paths,
)

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config" / "config.yaml"
SEEDS_B = ROOT / "config" / "overlays" / "seeds_b.yaml"


def test_shipped_overlay_is_the_generated_one():
    written = subprocess.run(
        [sys.executable, "-m", "repro.common.replication", "overlay", "config/config.yaml"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    assert SEEDS_B.read_text() == written, (
        "config/overlays/seeds_b.yaml is stale: regenerate it with `python -m "
        "repro.common.replication overlay config/config.yaml > config/overlays/seeds_b.yaml`"
    )


def test_overlay_moves_every_seed_and_nothing_else():
    config = yaml.safe_load(CONFIG.read_text())
    merged = copy.deepcopy(config)
    update_config(merged, yaml.safe_load(SEEDS_B.read_text()))
    before, after = dict(seed_paths(config)), dict(seed_paths(merged))
    assert before.keys() == after.keys() and before
    for path, value in before.items():
        expected = [v + 1000 for v in value] if isinstance(value, list) else value + 1000
        assert after[path] == expected, path

    def strip(node):  # the config without its seeds
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if (k,) not in {p[-1:] for p in before}}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    assert strip(merged) == strip(config)


def test_overlay_of_a_hand_made_config():
    config = {
        "device": "auto",
        "seeds": [0, 1],
        "paper": {
            "study": {"seed": 3, "repetitions": 5, "eval_seed": 7},
            "arms": [{"name": "a", "seeds": [2]}, {"name": "b"}],
            "plain_list": [1, 2, 3],
            "greedy": {"degree_seeds": 20},
            "claims": {"c": {"failed_seed": "loss", "registered_seeds": [0]}},
        },
    }
    assert set(NOT_RANDOM) >= {"degree_seeds", "failed_seed"}
    assert overlay(config, 10) == {
        "seeds": [10, 11],
        "paper": {
            "study": {"seed": 13, "eval_seed": 17},
            "arms": [{"name": "a", "seeds": [12]}, {"name": "b"}],  # the whole list
            "claims": {"c": {"registered_seeds": [10]}},
        },
    }


def test_a_seed_key_that_holds_no_integer_is_an_error():
    with pytest.raises(ValueError, match="a seed key holds 'x'"):
        overlay({"seed": "x"})


def _entry(verdict, differences):
    return {"id": "c", "claim": "c", "verdict": verdict, "differences": differences}


CRITERION = {"test": "beats", "delta": 0.02, "higher_is_better": True}


def test_pooled_verdict_is_scipys_t_interval_on_both_sets():
    a = {"vs x": {"0": 0.05, "1": 0.01, "2": 0.06}, "vs y": {"0": 0.2, "1": 0.3, "2": 0.25}}
    b = {
        "vs x": {"1000": 0.04, "1001": 0.07, "1002": 0.03},
        "vs y": {"1000": 0.2, "1001": 0.2, "1002": 0.3},
    }
    found = pooled(_entry(INCONCLUSIVE, a), _entry(INCONCLUSIVE, b), {"criterion": CRITERION})
    x = [0.05, 0.01, 0.06, 0.04, 0.07, 0.03]
    low, high = stats.t.interval(0.95, df=5, loc=sum(x) / 6, scale=stats.sem(x))
    assert found["part"] == "vs x" and found["n"] == 6  # the least favourable part
    assert found["interval"] == pytest.approx([low, high])
    assert found["verdict"] == (REPRODUCED if low > 0.02 else INCONCLUSIVE)
    assert pooled(_entry(REPRODUCED, a), _entry(REPRODUCED, {}), {"criterion": CRITERION}) is None


@pytest.mark.parametrize(
    "a,b,moved",
    [
        (REPRODUCED, REPRODUCED, "kept"),
        (REPRODUCED, CONTRADICTED, "flipped"),
        (CONTRADICTED, INCONCLUSIVE, "moved"),
    ],
)
def test_movement(a, b, moved):
    assert movement(a, b) == moved


def test_report_counts_and_rows():
    entries_a = [
        _entry(REPRODUCED, {}) | {"id": "one", "measured": 0.1, "interval": [0.05, 0.15]},
        _entry(CONTRADICTED, {}) | {"id": "two"},
        {"id": "chk", "claim": "x", "verdict": "passed", "type": "check"},
    ]
    entries_b = [
        _entry(INCONCLUSIVE, {}) | {"id": "one", "fragile": False},
        _entry(CONTRADICTED, {}) | {"id": "two"},
    ]
    text = compare([("Paper", "p", entries_a, entries_b, {})])
    assert text.splitlines()[2].startswith("2 claims: 1 kept their verdict, 1 moved")
    assert (
        "| one | reproduced, +0.1 [+0.05, +0.15] | inconclusive | – (not a paired claim) | moved |"
        in text
    )
    assert "chk" not in text  # checks are not claims
