"""PLSA's end-to-end table in its docs page is drawn from the metrics files of a run."""

from __future__ import annotations

import json

from repro.plsa.doctables import end_to_end


def test_the_end_to_end_table_has_each_data_sets_means_and_sds_with_the_best_in_bold(tmp_path):
    metrics = tmp_path / "plsa" / "metrics"
    metrics.mkdir(parents=True)
    gss = {
        "dataset": "csbm_gss",
        "seeds": [0, 1, 2],
        "methods": {
            "erm": {"mean": {"target_accuracy": 0.65064}, "std": {"target_accuracy": 0.0077}},
            "pa": {
                "mean": {"target_accuracy": 0.6754, "pi_l1_error": 0.081},
                "std": {"target_accuracy": 0.0101, "pi_l1_error": 0.057},
            },
            "plsa": {
                "mean": {"target_accuracy": 0.5968, "pi_l1_error": 1.219},
                "std": {"target_accuracy": 0.0118, "pi_l1_error": 0.026},
            },
        },
    }
    (metrics / "csbm_gss.json").write_text(json.dumps(gss))
    # an estimator study's file sits beside them and is no data set's
    (metrics / "estimator_rate.json").write_text(json.dumps({"rows": []}))
    assert end_to_end(tmp_path / "plsa") == (
        "**csbm_gss (3 seeds)**\n\n"
        "| method | target accuracy ↑ | π̂ᵀ L1 error ↓ |\n|---|---|---|\n"
        "| erm | 0.6506 ± 0.0077 | – |\n"
        "| pa | **0.6754 ± 0.0101** | **0.0810 ± 0.0570** |\n"
        "| plsa | 0.5968 ± 0.0118 | 1.2190 ± 0.0260 |"
    )
