"""Every seed that feeds a QSurv result comes from the config, and changing it changes the
result (issue 34 §3).

The seed keys of ``papers.qsurv`` (``registered_seeds`` of the claims aside: a record, not an
input) are ``seeds`` (the synthetic scenarios and every real data set without its own) and
``real_datasets.<name>.seeds``. A run's seed draws the synthetic sample, the stratified
split, the initialisation and each epoch's shuffling (repro.qsurv.prepare, train, neural):
the same seeds give the same predictions bit for bit, the seeds + 1000 other ones.
"""

import numpy as np
import pytest

from repro.common.io import read_npz, write_npz
from repro.qsurv.prepare import PrepareConfig, prepare
from repro.qsurv.train import TrainConfig, train
from tests.qsurv.test_claims import CONFIGS
from tests.seed_keys import seed_paths

Q = CONFIGS["config"]["papers"]["qsurv"]
# the keys that feed data and runs (registered_seeds, a claim's record: test_seed_keys.py)
SEED_KEYS = [p for p in seed_paths(Q) if p[0] != "claims"]


def fed_by(key) -> tuple[str, str, list[int]]:
    """(data set, source, seeds) of a data set the seed key feeds."""
    if key == ("seeds",):
        return Q["synthetic"]["scenarios"][0], "synthetic", Q["seeds"]
    dataset = key[1]
    return dataset, Q["real_datasets"][dataset]["source"], Q["real_datasets"][dataset]["seeds"]


def predictions(tmp_path, dataset, source, seeds, relabel=None) -> tuple[dict, dict]:
    """Prepared arrays and one epoch of QSurv's predictions on them (a tiny network);
    ``relabel``: the same arrays, trained under these seeds instead."""
    folder = tmp_path / "_".join(map(str, seeds))
    folder.mkdir(parents=True)
    data = folder / "data.npz"
    prepare(PrepareConfig(dataset, source, tuple(seeds), n_samples=300), str(data))
    if relabel is not None:
        write_npz(data, **{**read_npz(data), "seeds": np.asarray(relabel)})
    spec = Q["methods"]["qsurv"]
    cfg = TrainConfig("qsurv", dict(spec), {"epochs": 1, "hidden": [8]}, device="cpu")
    out = folder / "qsurv"
    train(cfg, str(data), f"{out}.pt", f"{out}.npz", f"{out}.json", f"{out}.ckpt")
    return read_npz(data), read_npz(f"{out}.npz")


@pytest.mark.parametrize("key", sorted(SEED_KEYS), ids=".".join)
def test_a_seed_key_changes_the_result(tmp_path, key):
    dataset, source, seeds = fed_by(key)
    seeds = seeds[:2]  # two of them are enough to see it
    data, first = predictions(tmp_path / "a", dataset, source, seeds)
    _, again = predictions(tmp_path / "b", dataset, source, seeds)
    shifted_data, shifted = predictions(tmp_path / "c", dataset, source, [s + 1000 for s in seeds])
    np.testing.assert_array_equal(first["surv_metric"], again["surv_metric"])
    assert not np.array_equal(data["index_test"], shifted_data["index_test"])  # the split
    assert not np.allclose(first["surv_metric"], shifted["surv_metric"])
    # the same split trained under the shifted seeds: the initialisation and shuffling move
    relabel = [s + 1000 for s in seeds]
    _, retrained = predictions(tmp_path / "d", dataset, source, seeds, relabel=relabel)
    assert not np.allclose(first["surv_metric"], retrained["surv_metric"])
