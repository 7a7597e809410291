"""The package's public API and the command line of every step a rule runs.

* ``from repro.qsurv import ...`` gives the model, the quadrature rules and the metrics
  (lazily: importing the package for the DAG-time config check loads no torch), and they
  work together: a Weibull-shaped hazard net's quadrature loss equals its closed form.
* ``python -m repro.qsurv.<step> --help`` for every step (its ``main`` run in-process).
"""

import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

STEPS = ["prepare", "train", "evaluate", "figures", "quadrature_study", "claims"]


def test_package_import_is_light_and_exports_the_api():
    code = "import sys, repro.qsurv as q; print(q.TITLE, sorted(q.__all__), 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "QSurv" and out.stdout.strip().endswith("False")
    import repro.qsurv as qsurv

    for name in qsurv.__all__:
        assert getattr(qsurv, name) is not None
    with pytest.raises(AttributeError):
        qsurv.not_an_export  # noqa: B018


def test_exports_work_together():
    from repro.qsurv import QuadratureLikelihood, build_hazard_net, integrate, unit_rule

    u, w = unit_rule("gauss_legendre", 3)
    assert w.sum() == pytest.approx(1.0) and np.all((u > 0) & (u < 1))
    assert integrate(lambda s: 3 * s**2, np.array([2.0]), "gauss_legendre", 2)[0] == pytest.approx(
        8.0
    )
    net = build_hazard_net(
        "time_lora",
        in_features=2,
        hidden=[8],
        dropout=0.0,
        rank=2,
        alpha=2.0,
        time_width=4,
        time_depth=2,
    )
    x, v, e = torch.randn(5, 2), torch.rand(5), torch.ones(5)
    loss = QuadratureLikelihood(rule="gauss_legendre", nodes=15, time_scale=10.0)(net, x, v, e)
    with torch.no_grad():
        h_event = net(x, v[:, None])[:, 0]
        grid = torch.linspace(0, 1, 2001)[None, :] * v[:, None]
        h = net(x, grid)
        cumulative = 10.0 * torch.trapezoid(h, grid, dim=1)
    expected = -(e * h_event.log() - cumulative).mean()
    assert float(loss.detach()) == pytest.approx(float(expected), rel=1e-4)


def test_metrics_exports_score_curves():
    from repro.qsurv import official_metrics, survival_metrics

    rng = np.random.default_rng(0)
    t, e = rng.exponential(1.0, 200), (rng.uniform(size=200) < 0.7).astype(float)
    times = np.linspace(0, t.max(), 50)
    surv = np.exp(-np.outer(np.ones(200), times))
    assert survival_metrics(surv, times, t, e)["ctd"] == pytest.approx(0.5)  # all tied
    scores = official_metrics(lambda s: np.exp(-np.outer(np.ones(200), s)), t, e, t, e)
    assert scores["cindex_ipcw"] == pytest.approx(0.5)


@pytest.mark.parametrize("step", STEPS)
def test_every_step_has_a_command_line(step, monkeypatch, capsys):
    """``python -m repro.qsurv.<step> --help``, run in this process (no import cost)."""
    module = importlib.import_module(f"repro.qsurv.{step}")
    monkeypatch.setattr(sys, "argv", [f"python -m repro.qsurv.{step}", "--help"])
    with pytest.raises(SystemExit) as exit_:
        module.main()
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    first_line = module.__doc__.strip().splitlines()[0]
    assert out.startswith("usage:") and first_line in " ".join(out.split())
    source = Path(module.__file__).read_text()
    assert 'if __name__ == "__main__":\n    main()' in source
