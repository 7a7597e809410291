"""Real graphs and file readers: networkx's bundled graphs, SNAP edge lists, Matrix Market."""

from __future__ import annotations

import gzip
import io
import tarfile

import networkx as nx
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from repro.sbd import graphs
from repro.sbd.greedy import GreedyConfig, decompose


def test_lesmis_is_the_weighted_co_occurrence_graph():
    A = graphs.lesmis()
    G = nx.les_miserables_graph()
    assert A.shape == (77, 77) and A.nnz == 2 * G.number_of_edges()
    assert (A != A.T).nnz == 0 and A.data.max() == max(w for *_, w in G.edges(data="weight"))


def test_davis_is_the_18_by_14_biadjacency():
    A = graphs.davis()
    assert A.shape == (18, 14) and A.nnz == 89 and set(A.data) == {1}


@pytest.mark.parametrize("name", ["lesmis", "davis"])
@pytest.mark.parametrize("signed", [True, False])
def test_real_graphs_round_trip_exactly(name, signed):
    A = graphs.BUNDLED[name]()
    dec, _ = decompose(A, GreedyConfig(signed=signed))
    assert (dec.to_sparse() != A).nnz == 0
    X = np.random.default_rng(0).standard_normal((A.shape[1], 5))
    np.testing.assert_allclose(dec.spmm(X), A @ X, atol=1e-10)


SNAP_TEXT = "# Directed graph\n# FromNodeId\tToNodeId\n10\t20\n20\t10\n10\t30\n30\t30\n10\t20\n"


def write_snap(path):
    with gzip.open(path, "wt") as handle:
        handle.write(SNAP_TEXT)


def test_snap_reader_relabels_and_symmetrises(tmp_path):
    write_snap(tmp_path / "g.txt.gz")
    A = graphs.read_snap(tmp_path / "g.txt.gz")
    # ids 10, 20, 30 -> 0, 1, 2; the duplicate 10->20 sums to 2
    np.testing.assert_array_equal(A.toarray(), [[0, 2, 1], [1, 0, 0], [0, 0, 1]])
    U = graphs.load("snap_edgelist", tmp_path / "g.txt.gz", symmetrize=True)
    np.testing.assert_array_equal(U.toarray(), [[0, 1, 1], [1, 0, 0], [1, 0, 0]])


def write_suitesparse(path, name, M):
    """A SuiteSparse-style NAME.tar.gz holding NAME/NAME.mtx (plus a decoy)."""
    with tarfile.open(path, "w:gz") as tar:
        for member, matrix in (
            (f"{name}/{name}.mtx", M),
            (f"{name}/{name}_coord.mtx", sp.coo_matrix(M.tocsr()[:1])),
        ):
            buffer = io.BytesIO()
            scipy.io.mmwrite(buffer, matrix)
            info = tarfile.TarInfo(member)
            info.size = buffer.tell()
            buffer.seek(0)
            tar.addfile(info, buffer)


def test_matrix_market_in_a_suitesparse_tarball(tmp_path):
    M = sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]]))
    write_suitesparse(tmp_path / "tiny.tar.gz", "tiny", sp.coo_matrix(M))
    A = graphs.read_matrix_market(tmp_path / "tiny.tar.gz")
    np.testing.assert_array_equal(A.toarray(), M.toarray())
    scipy.io.mmwrite(tmp_path / "plain.mtx", sp.coo_matrix(M * 3))
    np.testing.assert_array_equal(
        graphs.read_matrix_market(tmp_path / "plain.mtx").toarray(), 3 * M.toarray()
    )
