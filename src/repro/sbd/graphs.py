"""Graphs as sparse integer matrices: networkx's bundled real graphs (embedded) and
SNAP edge lists / Matrix Market files (full scale)."""

from __future__ import annotations

import gzip
import tarfile
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import scipy.io
import scipy.sparse as sp

from repro.sbd.factors import canonical


def lesmis() -> sp.csr_matrix:
    """Les Misérables co-occurrence: 77 × 77, symmetric, integer weights."""
    G = nx.les_miserables_graph()
    return canonical(
        nx.to_scipy_sparse_array(G, nodelist=sorted(G), weight="weight", dtype=np.int64)
    )


def davis() -> sp.csr_matrix:
    """Davis Southern Women: 18 women × 14 events, bipartite, binary."""
    G = nx.davis_southern_women_graph()
    top, bottom = G.graph["top"], G.graph["bottom"]
    return canonical(nx.bipartite.biadjacency_matrix(G, row_order=top, column_order=bottom))


BUNDLED = {"lesmis": lesmis, "davis": davis}


def undirected(A: sp.spmatrix) -> sp.csr_matrix:
    """Symmetrised binary adjacency without self-loops: an edge in either direction,
    duplicates counted once."""
    A = sp.csr_matrix(A)
    A = canonical((A + A.T) != 0)
    A.setdiag(0)
    return canonical(A)


def _comment_char(path: Path) -> str:
    """'%' if a line near the top starts with it (KONECT style), else '#' (SNAP)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as handle:
        head = handle.read(1 << 16).splitlines()
    return "%" if any(line.startswith("%") for line in head) else "#"


def read_snap(path: str | Path) -> sp.csr_matrix:
    """A SNAP edge list (.txt or .txt.gz, '#' or '%' comments, two ids first on each line,
    whitespace-separated) with ids relabelled to 0..n-1 in sorted order; directed,
    duplicates summed. Parsed by pandas' C reader into int64 arrays (no Python strings)."""
    path = Path(path)
    try:
        edges = pd.read_csv(
            path,
            sep=r"\s+",
            comment=_comment_char(path),
            header=None,
            usecols=[0, 1],
            dtype=np.int64,
            engine="c",
        ).to_numpy()
    except pd.errors.EmptyDataError:
        edges = np.zeros((0, 2), dtype=np.int64)
    except ValueError as error:
        raise ValueError(f"{path}: not an edge list of integer ids ({error})") from error
    ids, flat = np.unique(edges, return_inverse=True)
    src, dst = flat.reshape(-1, 2).T
    ones = np.ones(len(src), dtype=np.int64)
    return canonical(sp.coo_matrix((ones, (src, dst)), shape=(len(ids), len(ids))))


def read_matrix_market(path: str | Path) -> sp.csr_matrix:
    """A .mtx file, or the main .mtx inside a SuiteSparse .tar.gz (NAME/NAME.mtx)."""
    path = Path(path)
    if path.name.endswith(".tar.gz"):
        name = path.name[: -len(".tar.gz")]
        with tarfile.open(path) as tar:
            mtx = [m for m in tar.getmembers() if m.name.endswith(".mtx")]
            main = next((m for m in mtx if Path(m.name).name == f"{name}.mtx"), None)
            if main is None:
                raise ValueError(f"{path}: no {name}.mtx inside (found {[m.name for m in mtx]})")
            M = scipy.io.mmread(tar.extractfile(main))
    else:
        M = scipy.io.mmread(path)
    M = sp.csr_matrix(M)
    if M.dtype.kind == "f" and not np.all(M.data == np.round(M.data)):
        raise ValueError(f"{path}: SBD needs integer weights")
    return canonical(M)


READERS = {"snap_edgelist": read_snap, "matrix_market": read_matrix_market}


def load(fmt: str, path: str | Path, *, symmetrize: bool) -> sp.csr_matrix:
    A = READERS[fmt](path)
    return undirected(A) if symmetrize else A
