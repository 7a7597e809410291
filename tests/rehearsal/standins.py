"""Stand-ins for the full-scale downloads: files in the real formats under the real file
names, small enough for a CPU rehearsal of the full-scale DAG (tests/rehearsal/run.py).

A download entry's URL ``https://HOST/PATH?QUERY`` is served from ``<www>/HOST/PATH?QUERY``
(PATH unquoted, as a web server maps it), so a stand-in keeps the real URL's base name and
``download_path`` names it as at full scale. One writer per file format; ``WRITERS`` says
which entry gets which. Every writer is seeded by the entry's name: the same stand-ins on
every run.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import scipy.io
import scipy.sparse as sp


def served_path(url: str) -> str:
    """Where under the server's root the file of ``url`` lies: HOST/PATH[?QUERY]."""
    parts = urllib.parse.urlsplit(url)
    path = urllib.parse.unquote(parts.netloc + parts.path)
    return f"{path}?{parts.query}" if parts.query else path


def local_url(url: str, base: str) -> str:
    """``url`` with its scheme and host replaced by the local server's ``base``."""
    parts = urllib.parse.urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return f"{base}/{parts.netloc}{parts.path}{query}"


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(int(hashlib.sha256(name.encode()).hexdigest()[:8], 16))


# --- QSurv: DeepSurv's HDF5 files and Rdatasets CSVs -----------------------------------------

# (covariates, rows) of each DeepSurv file: the real widths; rows cut to a CPU rehearsal.
DEEPSURV = {"metabric": 9, "support": 14, "gbsg": 7}
SURVIVAL_ROWS = 400


def _survival_times(rng, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exponential event times whose hazard depends on the covariates, independent censoring
    (about 40 %): a C-index above chance is learnable, as on the real tables."""
    risk = x[:, : min(3, x.shape[1])].sum(axis=1)
    event_time = rng.exponential(100 * np.exp(-0.7 * risk))
    censor_time = rng.exponential(150, size=len(x))
    return np.minimum(event_time, censor_time) + 0.5, (event_time <= censor_time)


def write_deepsurv_h5(path: Path, name: str) -> None:
    """DeepSurv's layout: groups train and test, each with x (float32), t, e."""
    rng = rng_for(name)
    x = rng.normal(size=(SURVIVAL_ROWS, DEEPSURV[name])).astype(np.float32)
    t, e = _survival_times(rng, x)
    cut = int(0.8 * SURVIVAL_ROWS)
    with h5py.File(path, "w") as handle:
        for group, rows in (("train", slice(0, cut)), ("test", slice(cut, None))):
            g = handle.create_group(group)
            g["x"] = x[rows]
            g["t"] = t[rows].astype(np.float32)
            g["e"] = e[rows].astype(np.int32)


def write_flchain_csv(path: Path, name: str) -> None:
    """Rdatasets' survival/flchain.csv (pre-2023 layout: a quoted row-name column, NA)."""
    rng = rng_for(name)
    n = SURVIVAL_ROWS
    frame = pd.DataFrame(
        {
            "age": rng.integers(50, 100, n),
            "sex": rng.choice(["F", "M"], n),
            "sample.yr": rng.integers(1995, 2004, n),
            "kappa": rng.gamma(2.0, 0.8, n).round(2),
            "lambda": rng.gamma(2.0, 0.9, n).round(3),
            "flc.grp": rng.integers(1, 11, n),
            "creatinine": np.where(rng.random(n) < 0.1, np.nan, rng.normal(1.1, 0.3, n).round(1)),
            "mgus": rng.integers(0, 2, n),
        }
    )
    x = frame[["age", "kappa", "lambda"]].to_numpy(float)
    t, e = _survival_times(rng, (x - x.mean(axis=0)) / x.std(axis=0))
    frame["futime"] = np.round(t * 10).astype(int)
    frame["death"] = e.astype(int)
    frame["chapter"] = np.where(e, rng.choice(["Circulatory", "Neoplasms"], n), None)
    frame.index = np.arange(1, n + 1)
    frame.to_csv(path, na_rep="NA")


def write_nwtco_csv(path: Path, name: str) -> None:
    """Rdatasets' survival/nwtco.csv: seqno, instit, histol, stage, study, rel, edrel, age,
    in.subcohort."""
    rng = rng_for(name)
    n = SURVIVAL_ROWS
    frame = pd.DataFrame(
        {
            "seqno": np.arange(1, n + 1),
            "instit": rng.integers(1, 3, n),
            "histol": rng.integers(1, 3, n),
            "stage": rng.integers(1, 5, n),
            "study": rng.integers(3, 5, n),
        }
    )
    risk = (frame[["histol", "stage"]].to_numpy(float) - [1.5, 2.5]).sum(axis=1)
    t, e = _survival_times(rng, risk[:, None])
    frame["rel"] = e.astype(int)
    frame["edrel"] = np.round(t * 20).astype(int)
    frame["age"] = rng.integers(1, 120, n)
    frame["in.subcohort"] = rng.choice(["TRUE", "FALSE"], n)
    frame.index = np.arange(1, n + 1)
    frame.to_csv(path)


# --- PLSA: Pair-Align's MAG graphs (torch-saved PyG Data) ------------------------------------

MAG_CLASSES, MAG_FEATURES, MAG_NODES = 20, 128, 400


def write_pyg_mag(path: Path, name: str) -> None:
    """A torch-saved PyG ``Data`` with x (float32, 128 wide as MAG's), y (20 classes, class 19
    the merged one) and edge_index (both directions); homophilous, each country its own class
    shares (the label shift the paper adapts to)."""
    import torch
    from torch_geometric.data import Data

    rng = rng_for(name)
    shares = rng.dirichlet(np.full(MAG_CLASSES, 2.0))
    y = rng.choice(MAG_CLASSES, size=MAG_NODES, p=shares)
    centres = rng.normal(size=(MAG_CLASSES, MAG_FEATURES))
    x = (centres[y] + 2.0 * rng.normal(size=(MAG_NODES, MAG_FEATURES))).astype(np.float32)
    same = y[:, None] == y[None, :]
    draw = rng.random((MAG_NODES, MAG_NODES))
    upper = np.triu((same & (draw < 0.04)) | (~same & (draw < 0.004)), k=1)
    a, b = np.nonzero(upper)
    edge_index = torch.from_numpy(np.stack([np.r_[a, b], np.r_[b, a]]).astype(np.int64))
    data = Data(x=torch.from_numpy(x), edge_index=edge_index, y=torch.from_numpy(y))
    torch.save(data, path)


# --- SBD: SNAP edge lists and a SuiteSparse Matrix Market tarball ----------------------------


def _cliquish_edges(rng, nodes: int, groups: int) -> np.ndarray:
    """Overlapping co-author cliques plus sparse noise: what SBD's blocks find."""
    edges = []
    for _ in range(groups):
        members = rng.choice(nodes, size=rng.integers(4, 12), replace=False)
        a, b = np.meshgrid(members, members)
        edges.append(np.stack([a.ravel(), b.ravel()], axis=1))
    edges.append(rng.integers(0, nodes, size=(nodes, 2)))
    edges = np.concatenate(edges)
    return edges[edges[:, 0] != edges[:, 1]]


def write_snap_edgelist(path: Path, name: str) -> None:
    """A gzipped SNAP edge list: '#' header lines, tab-separated ids with gaps."""
    rng = rng_for(name)
    edges = _cliquish_edges(rng, nodes=300, groups=40)
    ids = np.sort(rng.choice(10**6, size=300, replace=False))
    lines = [f"# {name}: a stand-in for the rehearsal", "# FromNodeId\tToNodeId"]
    lines += [f"{ids[a]}\t{ids[b]}" for a, b in edges]
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(lines) + "\n")


def write_suitesparse_tarball(path: Path, name: str) -> None:
    """NAME.tar.gz holding NAME/NAME.mtx (a symmetric pattern matrix, as DIMACS10's)."""
    rng = rng_for(name)
    edges = _cliquish_edges(rng, nodes=300, groups=40)
    M = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(300, 300))
    M = sp.coo_matrix(((M + M.T) != 0).astype(np.int64))
    buffer = io.BytesIO()
    scipy.io.mmwrite(buffer, M, field="pattern", symmetry="symmetric")
    stem = path.name.removesuffix(".tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo(f"{stem}/{stem}.mtx")
        info.size = buffer.tell()
        buffer.seek(0)
        tar.addfile(info, buffer)


# --- ST reliability: the four CRISPRi lines (h5ad) and the SE-600M release -------------------

# the SE release's genes (tests/st_reliability/test_se_encoder.py: G0..G11) are among the
# lines' genes, beside the cell-cycle and p53 programme genes the evaluation looks up
ST_GENES = ["MKI67", "TOP2A", "CDKN1A", "MDM2"] + [f"G{i}" for i in range(36)]
ST_PERTURBATIONS = {"non-targeting": 80, **{f"G{12 + i}": 24 for i in range(12)}}


def write_crispri_line(path: Path, name: str) -> None:
    """Raw counts in the Replogle/Nadig layout (obs ``gene``, var ``gene_name``, Ensembl-like
    ids as var names), each perturbation moving its own few genes; a line's own gene order.
    Half the counts are zero: arc-state's sentence sampler needs unexpressed genes in a cell."""
    from tests.st_reliability.test_fullscale import raw_line

    rng = rng_for(name)
    genes = list(rng.permutation(ST_GENES))
    adata = raw_line(int(rng.integers(1 << 30)), genes, ST_PERTURBATIONS)
    x = adata.X.toarray()
    x *= rng.random(x.shape) < 0.5  # sparse as single-cell counts: every cell leaves genes out
    for k, pert in enumerate(p for p in ST_PERTURBATIONS if p != "non-targeting"):
        rows = (adata.obs["gene"] == pert).to_numpy()
        x[np.ix_(rows, [(3 * k + j) % len(genes) for j in range(3)])] *= 3
    adata.X = sp.csr_matrix(x)
    adata.write_h5ad(path)


def write_se600m(path: Path, name: str) -> None:
    """SE-600M's checkpoint or protein table, from one tiny random-weight release written by
    arc-state's own classes (tests/st_reliability/test_se_encoder.py)."""
    import shutil
    import tempfile

    from tests.st_reliability.test_se_encoder import write_release

    with tempfile.TemporaryDirectory() as folder:
        files = write_release(Path(folder) / "release")
        source = files.checkpoint if name.endswith("checkpoint") else files.protein_embeddings
        shutil.copyfile(source, path)


WRITERS: dict[str, Callable[[Path, str], None]] = {
    **dict.fromkeys(DEEPSURV, write_deepsurv_h5),
    "flchain": write_flchain_csv,
    "nwtco": write_nwtco_csv,
    **{f"mag_{c}": write_pyg_mag for c in ("us", "cn", "de", "fr", "ru", "jp")},
    **{
        f"sbd_{g}": write_snap_edgelist
        for g in ("ca_hepph", "ca_astroph", "com_dblp", "web_google")
    },
    "sbd_copapers_dblp": write_suitesparse_tarball,
    **{
        f"st_reliability_{line}": write_crispri_line for line in ("k562", "rpe1", "hepg2", "jurkat")
    },
    "st_reliability_se600m_checkpoint": write_se600m,
    "st_reliability_se600m_proteins": write_se600m,
}


def writers() -> dict[str, Callable[[Path, str], None]]:
    from tests.rehearsal import malora_standins

    return {**WRITERS, **malora_standins.writers()}


def write_standins(downloads: dict, names, www: Path, base: str) -> dict:
    """Write the stand-in of each named download entry under ``www``; returns {name: path}
    for a file, {name: [{url, filename, path}, ...]} for a split's parquet listing."""
    from tests.rehearsal.malora_standins import write_parquet_split

    known = writers()
    splits = {n for n in names if downloads[n].get("parquet_split")}
    missing = sorted(set(names) - set(known) - splits)
    if missing:
        raise KeyError(f"no stand-in writer for the download entries {missing}")
    written = {}
    for name in names:
        url = downloads[name]["url"]
        if name in splits:
            written[name] = write_parquet_split(www, url, name, base, served_path, local_url)
            continue
        path = www / served_path(url)
        path.parent.mkdir(parents=True, exist_ok=True)
        known[name](path, name)
        written[name] = path
    return written
