"""Survival data sets: bundled in installed packages, downloaded files, or simulated.

Every loader returns a :class:`SurvivalFrame`: raw covariates (a DataFrame), durations
and events. Preprocessing (imputation, scaling, one-hot) is fitted on the training split
only, per seed, by :func:`fit_transform_split`.
"""

from __future__ import annotations

import dataclasses
import os

import h5py
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from repro.qsurv.catalog import BUNDLED, FILE_FORMATS

# Columns of the Rdatasets CSVs (pinned pre-2023 format): what to drop, what is categorical.
RDATASETS = {
    "flchain": dict(
        duration="futime",
        event="death",
        drop=["chapter", "sample.yr", "flc.grp"],
        categorical=["sex", "mgus"],
    ),
    "nwtco": dict(
        duration="edrel",
        event="rel",
        drop=["seqno", "in.subcohort"],
        categorical=["instit", "histol", "stage", "study"],
    ),
}


# Columns the official loaders leave out of the bundled tables: FLCHAIN's cause of death
# (a leak) and two administrative columns; GBSG2's progesterone receptor (its loader keeps
# 8 features: age, estrec, pnodes, tsize, horTh, menostat, tgrade).
BUNDLED_DROPS = {"flchain": RDATASETS["flchain"]["drop"], "gbsg2": ["progrec"]}


def _positive_times(covariates: pd.DataFrame, durations, events) -> SurvivalFrame:
    """Drop subjects who leave at time 0 (a few in FLCHAIN): the likelihood needs t > 0."""
    durations, events = np.asarray(durations, dtype=float), np.asarray(events, dtype=float)
    keep = durations > 0
    return SurvivalFrame(covariates[keep].reset_index(drop=True), durations[keep], events[keep])


@dataclasses.dataclass
class SurvivalFrame:
    covariates: pd.DataFrame
    durations: np.ndarray
    events: np.ndarray

    def __post_init__(self):
        self.durations = np.asarray(self.durations, dtype=np.float64)
        self.events = np.asarray(self.events, dtype=np.float64)
        n = len(self.covariates)
        if not (len(self.durations) == len(self.events) == n) or n == 0:
            raise ValueError("covariates, durations and events must have the same, non-zero length")
        if not np.all(np.isfinite(self.durations)) or np.any(self.durations <= 0):
            raise ValueError("durations must be finite and positive")
        if not np.isin(self.events, (0, 1)).all():
            raise ValueError("events must be 0 (censored) or 1 (event)")


# SurvSet (PyPI ``survset``, GPLv3) ships SUPPORT2 and NWTCO in its wheel, with ``num_`` and
# ``fac_`` column prefixes. What is left out, and why:
# - SUPPORT2: ``sfdm2`` (functional disability measured at the 2-month follow-up: it reads the
#   outcome), ``surv2m``/``surv6m`` (the SUPPORT prognostic model's survival estimates, a
#   fitted model's output rather than a covariate) and ``fac_num_co`` (``num_num_co`` again,
#   as a factor). The paper keeps durations ≥ 3 days (SurvSet's copy already starts at 3).
# - NWTCO: ``in_subcohort`` (the case-cohort sampling flag, as the Rdatasets loader drops
#   ``in.subcohort``) and ``num_stage`` (``fac_stage`` as a number); instit, histol, stage
#   and study stay categorical as in :data:`RDATASETS`.
SURVSET = {
    "support2": dict(
        drop=["fac_sfdm2", "num_surv2m", "num_surv6m", "fac_num_co"], min_duration=3.0
    ),
    "nwtco": dict(drop=["fac_in_subcohort", "num_stage"], min_duration=0.0),
}


def load_survset(name: str) -> SurvivalFrame:
    """SUPPORT2 or NWTCO from the SurvSet wheel (no network): raw covariates, factor columns as
    strings (missing stays missing and is imputed on the training split)."""
    from SurvSet.data import SurvLoader  # the wheel's pickles: only where these sets are used

    if name not in SURVSET:
        raise ValueError(f"no SurvSet spec for {name!r}; known: {sorted(SURVSET)}")
    spec = SURVSET[name]
    frame = SurvLoader().load_dataset(name)["df"]
    frame = frame[frame["time"] >= spec["min_duration"]].reset_index(drop=True)
    durations, events = frame.pop("time"), frame.pop("event")
    frame = frame.drop(columns=["pid", *spec["drop"]])
    for column in [c for c in frame if c.startswith("fac_")]:
        frame[column] = frame[column].map(lambda v: v if pd.isna(v) else str(v))
    return _positive_times(frame, durations, events)


def load_bundled(name: str) -> SurvivalFrame:
    """Real data sets that ship inside scikit-survival, lifelines and SurvSet (no network)."""
    if name in SURVSET:
        return load_survset(name)
    if name == "rossi":
        from lifelines.datasets import load_rossi

        frame = load_rossi()
        return SurvivalFrame(frame.drop(columns=["week", "arrest"]), frame["week"], frame["arrest"])
    from sksurv import datasets

    loaders = {
        "gbsg2": datasets.load_gbsg2,
        "flchain": datasets.load_flchain,
        "whas500": datasets.load_whas500,
        "veterans": datasets.load_veterans_lung_cancer,
        "aids": datasets.load_aids,
    }
    if name not in loaders:
        raise ValueError(f"unknown bundled data set {name!r}; choose from {BUNDLED}")
    covariates, outcome = loaders[name]()
    event_field, time_field = outcome.dtype.names
    covariates = covariates.drop(columns=BUNDLED_DROPS.get(name, []))  # as the official code
    return _positive_times(
        covariates.reset_index(drop=True), outcome[time_field], outcome[event_field]
    )


def load_deepsurv_h5(path: str | os.PathLike) -> SurvivalFrame:
    """DeepSurv's train/test HDF5 files (METABRIC, SUPPORT, GBSG), pooled as pycox does."""
    try:
        with h5py.File(path, "r") as handle:
            parts = [
                (handle[g]["x"][:], handle[g]["t"][:], handle[g]["e"][:]) for g in ("train", "test")
            ]
    except (OSError, KeyError) as err:
        raise ValueError(f"{path}: not a readable DeepSurv HDF5 file ({err})") from err
    x = np.concatenate([p[0] for p in parts])
    columns = [f"x{i}" for i in range(x.shape[1])]
    return _positive_times(
        pd.DataFrame(x, columns=columns),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )


def load_rdatasets_csv(path: str | os.PathLike, name: str) -> SurvivalFrame:
    if name not in RDATASETS:
        raise ValueError(f"no Rdatasets column spec for {name!r}; known: {sorted(RDATASETS)}")
    spec = RDATASETS[name]
    try:
        frame = pd.read_csv(path, index_col=0)
        durations, events = frame.pop(spec["duration"]), frame.pop(spec["event"])
    except (OSError, ValueError, KeyError, pd.errors.ParserError) as err:
        raise ValueError(f"{path}: not the expected {name} CSV ({err})") from err
    frame = frame.drop(columns=spec["drop"])
    for column in spec["categorical"]:  # levels as strings; missing stays missing (imputed)
        frame[column] = frame[column].map(lambda v: v if pd.isna(v) else str(v))
    return _positive_times(frame, durations, events)


def load_file(path: str | os.PathLike, *, name: str, file_format: str) -> SurvivalFrame:
    if file_format == "deepsurv_h5":
        return load_deepsurv_h5(path)
    if file_format == "rdatasets_csv":
        return load_rdatasets_csv(path, name)
    raise ValueError(f"unknown file format {file_format!r}; choose from {FILE_FORMATS}")


def split_indices(events: np.ndarray, fractions: tuple[float, float, float], seed: int):
    """Train/validation/test indices, stratified by the event indicator."""
    train_frac, val_frac, test_frac = fractions
    index = np.arange(len(events))
    rest, test = train_test_split(index, test_size=test_frac, stratify=events, random_state=seed)
    train, val = train_test_split(
        rest, test_size=val_frac / (train_frac + val_frac), stratify=events[rest], random_state=seed
    )
    return np.sort(train), np.sort(val), np.sort(test)


def make_preprocessor(covariates: pd.DataFrame) -> ColumnTransformer:
    """Mean imputation + missingness indicator + scaling; one-hot (first level dropped).

    Which columns get an indicator and which levels a factor has are read from the whole
    table (only its missingness and level names, no outcome), so that every seed's split has
    the same columns: SUPPORT2 has numeric columns with a single missing value, which a
    per-split choice would give an indicator in some seeds only. The imputed values, the
    scaling and the most frequent level are still fitted on the training split.
    """
    numeric = covariates.select_dtypes(include="number").columns.tolist()
    categorical = [c for c in covariates.columns if c not in numeric]
    with_missing = [c for c in numeric if covariates[c].isna().any()]
    levels = [sorted(covariates[c].dropna().unique()) for c in categorical]
    return ColumnTransformer(
        [
            (
                "numeric",
                make_pipeline(SimpleImputer(strategy="mean"), StandardScaler()),
                numeric,
            ),
            (
                "missing",
                make_pipeline(MissingIndicator(features="all"), StandardScaler()),
                with_missing,
            ),
            (
                "categorical",
                make_pipeline(
                    SimpleImputer(strategy="most_frequent"),
                    OneHotEncoder(
                        categories=levels,
                        drop="first",
                        handle_unknown="ignore",
                        sparse_output=False,
                    ),
                ),
                categorical,
            ),
        ],
        sparse_threshold=0.0,
    )


def fit_transform_split(frame: SurvivalFrame, fractions, seed: int) -> dict[str, np.ndarray]:
    """Split by seed, fit the preprocessing on the training part, transform all three."""
    train, val, test = split_indices(frame.events, fractions, seed)
    preprocessor = make_preprocessor(frame.covariates).fit(frame.covariates.iloc[train])
    out = {"index_test": test}
    for part, index in (("train", train), ("val", val), ("test", test)):
        out[f"x_{part}"] = preprocessor.transform(frame.covariates.iloc[index]).astype(np.float32)
        out[f"t_{part}"] = frame.durations[index]
        out[f"e_{part}"] = frame.events[index]
    return out
