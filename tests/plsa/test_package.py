"""The package's public API: importing it is cheap (the DAG-time config check imports it),
and the exported estimators run as the README describes on a planted CSBM pair."""

import subprocess
import sys

import numpy as np

import repro.plsa as plsa
from tests.conftest import ROOT


def test_import_is_light_and_every_export_resolves():
    code = (
        "import sys, repro.plsa; assert 'torch' not in sys.modules and 'sklearn' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    assert plsa.TITLE == "PLSA"
    for name in plsa.__all__:
        assert getattr(plsa, name).__name__ == name


def test_exported_estimators_recover_pi_target_from_oracle_probabilities():
    rng = np.random.default_rng(0)
    specs = plsa.shift_setting("gss", n=1500, sigma=0.5)
    source, target = (plsa.sample_csbm(spec, rng=rng) for spec in specs)
    onehot = np.eye(3)[target.y]
    pi_t = plsa.pair_distribution(target.edge_index, target.y, 3)
    pi_hat, info = plsa.plsa_estimate(onehot, target.edge_index, np.full(3, 1 / 3))
    assert info["converged"]
    np.testing.assert_allclose(pi_hat, pi_t, atol=1e-10)
    pi_s = plsa.pair_distribution(source.edge_index, source.y, 3)
    confusion = plsa.pair_confusion(np.eye(3)[source.y], source.y, source.edge_index, 3)
    pi_mm, _ = plsa.moment_matching_estimate(onehot, target.edge_index, confusion, pi_s)
    np.testing.assert_allclose(pi_mm, pi_t, atol=1e-10)
