"""repro.qsurv.data: file loaders on hand-written fixtures, splitting and preprocessing.

* A DeepSurv-layout HDF5 file (train/test groups; x float32, t float32, e int32) loads
  through ``load_deepsurv_h5`` and ``load_file`` pooled train-then-test; a truncated copy
  raises ValueError naming the file.
* An Rdatasets-layout flchain CSV loads with the dropped columns gone, categoricals as
  strings, missing values kept for imputation and the zero-time row removed.
* ``fit_transform_split``: fractions, stratification, disjoint covering indices, scaler
  fitted on the training part only, one-hot with the first level dropped (hand count on
  GBSG2), mean imputation with an indicator.
* ``load_bundled`` for gbsg2 and flchain against the raw scikit-survival tables, with the
  columns the official loaders leave out (GBSG2's progrec; FLCHAIN's chapter, ...) gone.
* SUPPORT2 and NWTCO from the SurvSet wheel: published counts, the outcome-reading columns
  gone, and NWTCO identical after preprocessing to the full-scale Rdatasets CSV loader.
"""

import re
import tempfile
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest

from repro.qsurv.data import (
    SurvivalFrame,
    fit_transform_split,
    load_bundled,
    load_deepsurv_h5,
    load_file,
    split_indices,
)

FRACTIONS = (0.6, 0.2, 0.2)


def write_deepsurv_h5(path, parts: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]):
    with h5py.File(path, "w") as handle:
        for group, (x, t, e) in parts.items():
            handle.create_dataset(f"{group}/x", data=x.astype(np.float32))
            handle.create_dataset(f"{group}/t", data=t.astype(np.float32))
            handle.create_dataset(f"{group}/e", data=e.astype(np.int32))


def deepsurv_parts(n_train=40, n_test=15, p=4, seed=0):
    rng = np.random.default_rng(seed)

    def part(n):
        return rng.normal(size=(n, p)), rng.uniform(0.5, 300.0, n), rng.integers(0, 2, n)

    return {"train": part(n_train), "test": part(n_test)}


@pytest.fixture
def deepsurv_file(tmp_path):
    path = tmp_path / "metabric.h5"
    parts = deepsurv_parts()
    write_deepsurv_h5(path, parts)
    return path, parts


def test_load_deepsurv_h5_pools_train_then_test(deepsurv_file):
    path, parts = deepsurv_file
    for frame in (
        load_deepsurv_h5(path),
        load_file(path, name="metabric", file_format="deepsurv_h5"),
    ):
        x = np.concatenate([parts["train"][0], parts["test"][0]]).astype(np.float32)
        t = np.concatenate([parts["train"][1], parts["test"][1]]).astype(np.float32)
        e = np.concatenate([parts["train"][2], parts["test"][2]])
        assert list(frame.covariates.columns) == ["x0", "x1", "x2", "x3"]
        np.testing.assert_array_equal(frame.covariates.to_numpy(), x)
        np.testing.assert_array_equal(frame.durations, t.astype(np.float64))
        np.testing.assert_array_equal(frame.events, e.astype(np.float64))
        assert frame.durations.dtype == frame.events.dtype == np.float64


def test_truncated_deepsurv_h5_names_the_file(deepsurv_file, tmp_path):
    path, _ = deepsurv_file
    truncated = tmp_path / "truncated.h5"
    truncated.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ValueError, match=re.escape(str(truncated))):
        load_deepsurv_h5(truncated)


def test_deepsurv_h5_missing_group_names_the_file(tmp_path):
    path = tmp_path / "only_train.h5"
    write_deepsurv_h5(path, {"train": deepsurv_parts()["train"]})
    with pytest.raises(ValueError, match=re.escape(str(path))):
        load_deepsurv_h5(path)


def test_deepsurv_h5_drops_zero_times(tmp_path):
    parts = deepsurv_parts()
    parts["test"][1][3] = 0.0
    path = tmp_path / "zero.h5"
    write_deepsurv_h5(path, parts)
    frame = load_deepsurv_h5(path)
    assert len(frame.durations) == 40 + 15 - 1 and np.all(frame.durations > 0)


FLCHAIN_CSV = (
    (
        '"","age","sex","sample.yr","kappa","lambda","flc.grp","creatinine","mgus","futime",'
        '"death","chapter"\n'
    )
    + """"1",97,"F",1997,5.7,4.86,10,1.7,0,85,1,"Circulatory"
"2",92,"F",2000,0.87,0.683,1,0.9,0,1281,1,"Neoplasms"
"3",94,"M",1997,4.36,3.85,10,NA,1,69,1,"Circulatory"
"4",92,"M",1996,2.42,2.22,9,1.2,0,0,1,"Circulatory"
"5",93,"F",1996,1.32,1.69,6,1.1,0,4322,0,NA
"""
)


def test_load_rdatasets_flchain(tmp_path):
    path = tmp_path / "flchain.csv"
    path.write_text(FLCHAIN_CSV)
    frame = load_file(path, name="flchain", file_format="rdatasets_csv")
    cov = frame.covariates
    assert list(cov.columns) == ["age", "sex", "kappa", "lambda", "creatinine", "mgus"]
    np.testing.assert_array_equal(frame.durations, [85, 1281, 69, 4322])  # the 0 row is gone
    np.testing.assert_array_equal(frame.events, [1, 1, 1, 0])
    assert cov["sex"].tolist() == ["F", "F", "M", "F"]
    assert cov["mgus"].tolist() == ["0", "0", "1", "0"]  # a category, as strings
    assert cov["creatinine"].isna().tolist() == [False, False, True, False]
    np.testing.assert_array_equal(cov["age"], [97, 92, 94, 93])
    assert cov.index.tolist() == [0, 1, 2, 3]


def test_rdatasets_errors_name_the_file(tmp_path):
    bad = tmp_path / "not_flchain.csv"
    bad.write_text('"","a","b"\n"1",1,2\n')
    with pytest.raises(ValueError, match=re.escape(str(bad))):
        load_file(bad, name="flchain", file_format="rdatasets_csv")
    with pytest.raises(ValueError, match="no Rdatasets column spec"):
        load_file(bad, name="gbsg2", file_format="rdatasets_csv")
    with pytest.raises(ValueError, match="unknown file format"):
        load_file(bad, name="flchain", file_format="parquet")


@pytest.fixture(scope="module")
def gbsg2():
    return load_bundled("gbsg2")


def test_split_indices_fractions_disjoint_covering_stratified(gbsg2):
    n = len(gbsg2.events)
    overall = gbsg2.events.mean()
    for seed in (0, 1):
        parts = split_indices(gbsg2.events, FRACTIONS, seed)
        joined = np.concatenate(parts)
        assert len(joined) == n and np.array_equal(np.sort(joined), np.arange(n))
        for part, fraction in zip(parts, FRACTIONS, strict=True):
            assert abs(len(part) - fraction * n) <= 1
            assert abs(gbsg2.events[part].mean() - overall) < 0.02
    a, b = split_indices(gbsg2.events, FRACTIONS, 0), split_indices(gbsg2.events, FRACTIONS, 1)
    assert not np.array_equal(a[2], b[2])  # the seed changes the split


def test_fit_transform_split_gbsg2(gbsg2):
    out = fit_transform_split(gbsg2, FRACTIONS, seed=0)
    train, val, test = split_indices(gbsg2.events, FRACTIONS, 0)
    np.testing.assert_array_equal(out["index_test"], test)
    for part, index in (("train", train), ("val", val), ("test", test)):
        np.testing.assert_array_equal(out[f"t_{part}"], gbsg2.durations[index])
        np.testing.assert_array_equal(out[f"e_{part}"], gbsg2.events[index])
        assert out[f"x_{part}"].dtype == np.float32 and len(out[f"x_{part}"]) == len(index)
    # the official loader's 8: 4 numeric (age, estrec, pnodes, tsize; no progrec)
    # + horTh 1 + menostat 1 + tgrade 2
    assert out["x_train"].shape[1] == 8
    numeric = out["x_train"][:, :4].astype(float)
    np.testing.assert_allclose(numeric.mean(0), 0.0, atol=1e-6)
    np.testing.assert_allclose(numeric.std(0), 1.0, rtol=1e-5)
    test_means = out["x_test"][:, :4].mean(0)
    assert np.all(test_means != 0.0) and np.any(np.abs(test_means) > 1e-3)
    # the same numbers as a scaler fitted on the training rows by hand
    age = gbsg2.covariates["age"].to_numpy()
    np.testing.assert_allclose(
        out["x_test"][:, 0], (age[test] - age[train].mean()) / age[train].std(), rtol=1e-5
    )
    # one-hot, first level dropped: the indicator of horTh == "yes" (levels no, yes)
    horth = gbsg2.covariates["horTh"].astype(str).to_numpy()
    onehot = out["x_train"][:, 4:]
    assert set(np.unique(onehot)) <= {0.0, 1.0}
    assert any(np.array_equal(col, (horth[train] == "yes").astype(np.float32)) for col in onehot.T)


def test_fit_transform_split_imputes_with_indicator():
    rng = np.random.default_rng(0)
    n = 200
    value = rng.normal(5.0, 2.0, n)
    value[::7] = np.nan
    colour = np.where(rng.uniform(size=n) < 0.7, "red", "blue").astype(object)
    colour[::11] = np.nan
    frame = SurvivalFrame(
        pd.DataFrame({"value": value, "colour": colour}),
        rng.uniform(1, 10, n),
        rng.integers(0, 2, n),
    )
    out = fit_transform_split(frame, FRACTIONS, seed=3)
    train, _, test = split_indices(frame.events, FRACTIONS, 3)
    # columns: value (imputed, scaled), its missingness indicator (scaled), colour one-hot
    assert out["x_train"].shape[1] == 3
    for part, index in (("train", train), ("test", test)):
        x = out[f"x_{part}"]
        missing = np.isnan(value[index])
        assert missing.any() and not np.isnan(x).any()
        # the mean fills the gap, so after scaling a missing value sits exactly at 0
        np.testing.assert_allclose(x[missing, 0], 0.0, atol=1e-6)
        indicator = x[:, 1]
        assert np.all(indicator[missing] > indicator[~missing].max())
        # levels (blue, red), blue dropped; a missing colour becomes the most frequent, red
        red = pd.Series(colour[index]).isna().to_numpy() | (colour[index] == "red")
        np.testing.assert_array_equal(x[:, 2], red.astype(np.float32))
    np.testing.assert_allclose(out["x_train"][:, :2].mean(0), 0.0, atol=1e-6)
    np.testing.assert_allclose(out["x_train"][:, :2].std(0), 1.0, rtol=1e-5)


def test_load_bundled_gbsg2(gbsg2):
    from sksurv.datasets import load_gbsg2

    covariates, outcome = load_gbsg2()
    assert len(gbsg2.durations) == 686
    np.testing.assert_array_equal(gbsg2.durations, outcome["time"])
    np.testing.assert_array_equal(gbsg2.events, outcome["cens"].astype(float))
    assert list(gbsg2.covariates.columns) == [c for c in covariates.columns if c != "progrec"]


def test_load_bundled_flchain_drops_zero_times_and_columns():
    from sksurv.datasets import load_flchain

    covariates, outcome = load_flchain()
    keep = outcome["futime"] > 0
    assert 0 < (~keep).sum() < 10
    frame = load_bundled("flchain")
    assert len(frame.durations) == keep.sum()
    assert np.all(frame.durations > 0)
    np.testing.assert_array_equal(frame.durations, outcome["futime"][keep])
    assert not {"chapter", "sample.yr", "flc.grp"} & set(frame.covariates.columns)
    assert set(frame.covariates.columns) == {"age", "creatinine", "kappa", "lambda", "mgus", "sex"}
    # preprocessing runs on it: 4 numeric + creatinine indicator + sex + mgus
    out = fit_transform_split(frame, FRACTIONS, seed=0)
    assert out["x_train"].shape[1] == 7 and not np.isnan(out["x_test"]).any()


def test_load_bundled_unknown():
    with pytest.raises(ValueError, match="unknown bundled"):
        load_bundled("metabric")


@pytest.mark.parametrize(
    "durations,events",
    [([1.0, 0.0], [1, 0]), ([1.0, np.nan], [1, 0]), ([1.0, 2.0], [1, 2]), ([1.0], [1, 0])],
)
def test_survival_frame_validates(durations, events):
    with pytest.raises(ValueError):
        SurvivalFrame(pd.DataFrame({"a": [0.0, 1.0]}), durations, events)


def test_rdatasets_missing_categorical_stays_missing(tmp_path):
    path = tmp_path / "flchain.csv"
    path.write_text(FLCHAIN_CSV.replace('"M",1997', "NA,1997"))
    frame = load_file(path, name="flchain", file_format="rdatasets_csv")
    assert frame.covariates["sex"].isna().tolist() == [False, False, True, False]


def test_prepare_real_data_clips_test_times_like_the_official_code(tmp_path):
    """Test times are clipped to the largest training/validation time; the prediction grid
    is 0, then the smallest to the largest time, so it covers every test time and the
    "full" horizon, and no test event is read at t = 0."""
    from repro.qsurv.prepare import PrepareConfig, prepare

    cfg = PrepareConfig(dataset="gbsg2", source="bundled", seeds=(0, 1, 2, 3))
    data = prepare(cfg, str(tmp_path / "gbsg2.npz"))
    raw = load_bundled("gbsg2").durations
    clipped = 0
    for i in range(4):
        seen = max(data["t_train"][i].max(), data["t_val"][i].max())
        original = raw[data["index_test"][i]]
        np.testing.assert_array_equal(data["t_test"][i], np.minimum(original, seen))
        clipped += int((original > seen).sum())
        grid = data["metric_grid"][i]
        assert grid[0] == 0 and grid[-1] == seen and len(grid) == cfg.prediction_grid_points
        # every test event is read after t = 0 (where S = 1 for all): no forced ties
        assert grid[1] == min(data[f"t_{part}"][i].min() for part in ("train", "val", "test"))
        assert grid[1] <= data["t_test"][i][data["e_test"][i] == 1].min()
        assert np.all(np.diff(grid) > 0)
    assert clipped > 0  # some seed's test set does reach past its training data


def test_survset_support2_as_the_paper_prepares_it():
    """SUPPORT2 from the SurvSet wheel: all 9,105 patients (6,201 deaths, the published
    count), durations ≥ 3 days, the outcome-reading columns gone, factors as strings."""
    frame = load_bundled("support2")
    assert len(frame.durations) == 9105 and int(frame.events.sum()) == 6201
    assert frame.durations.min() >= 3
    columns = set(frame.covariates.columns)
    assert not {"fac_sfdm2", "num_surv2m", "num_surv6m", "fac_num_co", "pid"} & columns
    assert {"num_age", "num_meanbp", "fac_dzgroup", "fac_ca"} <= columns
    assert frame.covariates["fac_dzgroup"].map(type).eq(str).all()
    # numeric columns with a single missing value: every seed still gets the same columns
    assert (frame.covariates.isna().sum() == 1).sum() >= 5
    widths = set()
    for seed in range(3):
        out = fit_transform_split(frame, FRACTIONS, seed=seed)
        assert np.isfinite(out["x_train"]).all()
        widths |= {out[f"x_{part}"].shape[1] for part in ("train", "val", "test")}
    assert len(widths) == 1


def test_survset_nwtco_matches_the_rdatasets_loader():
    """NWTCO from SurvSet gives the same covariates, after preprocessing, as the Rdatasets CSV
    loader of the full-scale config given the same table in Rdatasets' layout."""
    from SurvSet.data import SurvLoader

    frame = load_bundled("nwtco")
    assert len(frame.durations) == 4028 and int(frame.events.sum()) == 571  # relapses in R
    raw = SurvLoader().load_dataset("nwtco")["df"]
    rdatasets = pd.DataFrame(
        {
            "seqno": raw["pid"],
            "instit": raw["fac_instit"].astype(int),
            "histol": raw["fac_histol"].astype(int),
            "stage": raw["fac_stage"].astype(int),
            "study": raw["fac_study"].astype(int),
            "rel": raw["event"],
            "edrel": raw["time"],
            "age": raw["num_age"],
            "in.subcohort": raw["fac_in_subcohort"],
        }
    )
    path = Path(tempfile.mkdtemp()) / "nwtco.csv"
    rdatasets.to_csv(path)
    reference = load_file(path, name="nwtco", file_format="rdatasets_csv")
    np.testing.assert_array_equal(frame.durations, reference.durations)
    np.testing.assert_array_equal(frame.events, reference.events)
    ours, theirs = (fit_transform_split(f, FRACTIONS, seed=1) for f in (frame, reference))
    assert ours["x_train"].shape == theirs["x_train"].shape == (len(ours["t_train"]), 7)
    # the same seven preprocessed columns, in another order (the loaders name them differently)
    columns = [sorted(map(tuple, out["x_train"].T.round(6))) for out in (ours, theirs)]
    np.testing.assert_allclose(np.array(columns[0]), np.array(columns[1]))
