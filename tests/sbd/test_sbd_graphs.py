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
    dec = decompose(A, GreedyConfig(signed=signed))
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


def _naive_snap(text: str) -> np.ndarray:
    """Line by line: skip comments and blanks, first two ids, sorted relabelling, summed."""
    lines = [line for line in text.splitlines() if line.strip() and line[0] not in "#%"]
    edges = [tuple(int(x) for x in line.split()[:2]) for line in lines]
    ids = sorted({i for e in edges for i in e})
    label = {i: k for k, i in enumerate(ids)}
    dense = np.zeros((len(ids), len(ids)), dtype=np.int64)
    for a, b in edges:
        dense[label[a], label[b]] += 1
    return dense


@pytest.mark.parametrize("comment", ["#", "%"])
def test_snap_reader_matches_a_line_by_line_reference(tmp_path, comment):
    """Random ids (gaps, repeats, self-loops), tabs and spaces, extra columns, comments."""
    rng = np.random.default_rng(4)
    lines = [f"{comment} generated", f"{comment} FromNodeId ToNodeId"]
    for a, b in rng.choice([3, 7, 10**9, 42, 5, 8], size=(200, 2)):
        sep = "\t" if rng.random() < 0.5 else "  "
        extra = f" {rng.integers(100)}" if rng.random() < 0.3 else ""
        lines.append(f"{a}{sep}{b}{extra}")
    lines.insert(50, "")
    text = "\n".join(lines) + "\n"
    with gzip.open(tmp_path / "g.txt.gz", "wt") as handle:
        handle.write(text)
    (tmp_path / "g.txt").write_text(text)
    for name in ("g.txt.gz", "g.txt"):
        A = graphs.read_snap(tmp_path / name)
        np.testing.assert_array_equal(A.toarray(), _naive_snap(text))


def test_snap_reader_rejects_non_integer_ids_and_reads_empty_files(tmp_path):
    (tmp_path / "bad.txt").write_text("# x\n1 2\nthree 4\n")
    with pytest.raises(ValueError, match="bad.txt"):
        graphs.read_snap(tmp_path / "bad.txt")
    (tmp_path / "empty.txt").write_text("# only comments\n")
    assert graphs.read_snap(tmp_path / "empty.txt").shape == (0, 0)


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
