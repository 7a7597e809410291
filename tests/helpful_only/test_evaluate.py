"""The summary over seeds: per-seed values, paired t intervals, paired differences, curves."""

import pytest

from repro.common.stats import paired_difference
from repro.helpful_only.evaluate import summarise
from repro.helpful_only.figures import FIGURES, make_figure
from tests.helpful_only.summaries import run_document, summary_with


def value(prior, recipe, metric, seed):
    return (
        {"base": 0.1, "ar_sft": 0.5, "ar_sft_half": 0.4}.get(recipe, 0.3)
        + 0.05 * seed
        + (prior == "correlated") * 0.1
    )


def test_summary_numbers():
    s = summary_with(value, seeds=range(4))
    em = s["per_seed"]["correlated"]["ar_sft"]["em"]
    assert em == {s: pytest.approx(0.6 + 0.05 * s) for s in range(4)}
    mean = s["mean"]["correlated"]["ar_sft"]["em"]
    assert mean["mean"] == pytest.approx(0.675) and mean["low"] <= 0.675 <= mean["high"]
    d = s["vs_base"]["correlated"]["ar_sft"]["em"]
    ref = paired_difference(em, s["per_seed"]["correlated"]["base"]["em"], method="t")
    assert s["interval"] == "t"  # 4 seeds: a bootstrap under-covers
    assert (d["mean"], d["low"], d["high"]) == pytest.approx((0.4, ref.low, ref.high))
    assert s["decorrelated_minus_correlated"]["ar_sft"]["em"]["mean"] == pytest.approx(-0.1)
    # a mitigation against its reference: AR at the mixture's own AR dose
    assert s["vs_reference"]["correlated"]["ar_sdf"]["em"]["mean"] == pytest.approx(-0.1)
    assert s["budgets"]["ar_rl"] == [(150, 4800)]
    assert s["curves"]["correlated"]["ar_sft"]["steps"] == [0, 75, 150]


def test_summary_refuses_unpaired_seeds():
    runs = [
        run_document("correlated", 0),
        run_document("correlated", 1),
        run_document("decorrelated", 0),
    ]
    with pytest.raises(ValueError, match="prior decorrelated has seeds"):
        summarise(runs, {})


@pytest.fixture(scope="module")
def summary():
    return summary_with(value, seeds=range(3))


@pytest.mark.parametrize("name", FIGURES)
def test_figures_draw_every_recipe(name, summary, tmp_path):
    import matplotlib.pyplot as plt

    from repro.helpful_only import figures

    fig = getattr(figures, name)(summary)
    if name == "bars":
        assert len(fig.axes[0].containers) == 2 * len(summary["recipes"])  # bars + error bars
    if name == "curves":
        assert all(len(ax.lines) == len(summary["recipes"]) - 1 for ax in fig.axes)
    plt.close(fig)
    make_figure(name, summary, tmp_path / "f.png", tmp_path / "f.pdf")
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
