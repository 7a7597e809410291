"""repro.plsa.datasets: loaders on tiny fixtures written in the real raw formats.

* UDAGCN DBLP/ACM text files (``<name>/raw/<name>_{docs,labels,edgelist}.txt``) load from
  the data root, the domain folder or the raw folder, with features and labels as planted
  and the edge list symmetrised (duplicates, reversed copies and a self loop removed).
* A torch-saved PyG ``Data`` (Pair-Align's MAG ``US_labels_20.pt``) and a plain dict load with
  ``weights_only=True``; a pickled foreign object is refused. MAG's merged class 19 stays in
  the graph and leaves the eval mask, through prepare_real and load_pair.
* An OGB-style ``ogbn_arxiv/raw/*.csv.gz`` tree is split by year exactly as a naive,
  loop-by-loop reading of EERM's procedure does (degree order, re-indexing, year mask).
* Truncated, corrupt or mismatched files raise ValueError naming the file.
"""

import re

import numpy as np
import pandas as pd
import pytest
import torch
from torch_geometric.data import Data

from repro.plsa.datasets import (
    load_ogb_arxiv_by_year,
    load_pyg_graph_file,
    load_udagcn,
    symmetrise,
)
from repro.plsa.prepare import load_pair, prepare_real

RNG = np.random.default_rng(0)
N = 12
X = RNG.integers(0, 2, size=(N, 7)).astype(np.float32)  # bag-of-words 0/1, like UDAGCN docs
Y = RNG.integers(0, 3, size=N)
# Directed list with a duplicate, a reversed copy and a self loop.
EDGES = [(0, 1), (1, 0), (0, 1), (2, 3), (3, 3), (4, 11), (5, 2), (7, 8), (9, 10), (10, 6)]


def undirected_set(edges) -> set[tuple[int, int]]:
    return {p for u, v in edges if u != v for p in ((u, v), (v, u))}


def check_graph(graph, x, y, edges):
    np.testing.assert_array_equal(graph.x, x)
    np.testing.assert_array_equal(graph.y, y)
    assert graph.x.dtype == np.float32 and graph.y.dtype == np.int64
    ei = graph.edge_index
    assert ei.dtype == np.int64 and ei.shape[0] == 2
    pairs = list(zip(ei[0].tolist(), ei[1].tolist(), strict=True))
    assert pairs == sorted(set(pairs))  # sorted, no duplicates
    assert set(pairs) == undirected_set(edges)


def write_udagcn(root, name="acm"):
    raw = root / name / "raw"
    raw.mkdir(parents=True)
    np.savetxt(raw / f"{name}_docs.txt", X, fmt="%d", delimiter=",")
    (raw / f"{name}_labels.txt").write_text("".join(f"{v}\r\n" for v in Y))  # CRLF as on Windows
    (raw / f"{name}_edgelist.txt").write_text("".join(f"{u},{v}\n" for u, v in EDGES))
    return raw


def raises_naming(path, match=""):
    return pytest.raises(ValueError, match=re.escape(str(path)) + ".*" + match)


def test_symmetrise_small():
    out = symmetrise(np.array([[2, 0, 1, 1], [0, 2, 1, 3]]), 4)
    np.testing.assert_array_equal(out, [[0, 1, 2, 3], [2, 3, 0, 1]])


@pytest.mark.parametrize("where", ["root", "domain", "raw"])
def test_udagcn_loads_planted_graph(tmp_path, where):
    raw = write_udagcn(tmp_path, "dblp")
    path = {"root": tmp_path, "domain": raw.parent, "raw": raw}[where]
    domain = load_udagcn(path, "DBLP")
    assert domain.name == "dblp" and domain.mask.all() and domain.mask.shape == (N,)
    check_graph(domain.graph, X, Y, EDGES)


def test_udagcn_truncated_or_mismatched_files(tmp_path):
    raw = write_udagcn(tmp_path)
    docs, labels, edges = (raw / f"acm_{p}.txt" for p in ("docs", "labels", "edgelist"))
    text = docs.read_bytes()
    docs.write_bytes(text[: len(text) - 5])  # last row cut short
    with raises_naming(docs):
        load_udagcn(tmp_path, "acm")
    docs.write_bytes(text)
    labels.write_text("".join(f"{v}\n" for v in Y[:-1]))  # one label missing
    with raises_naming(labels, re.escape(f"(11,), but {docs} has 12 feature rows")):
        load_udagcn(tmp_path, "acm")
    labels.write_text("".join(f"{v}\n" for v in Y))
    edges.write_text("0,1\n3,12\n")  # node 12 does not exist
    with raises_naming(edges, "outside"):
        load_udagcn(tmp_path, "acm")
    edges.write_text("0,1\n3,")  # truncated line
    with raises_naming(edges, "integers"):
        load_udagcn(tmp_path, "acm")
    edges.write_text("")
    with raises_naming(edges):
        load_udagcn(tmp_path, "acm")
    with pytest.raises(FileNotFoundError):
        load_udagcn(tmp_path, "dblp")


def tensors():
    edge_index = torch.tensor(EDGES, dtype=torch.long).t().contiguous()
    return torch.from_numpy(X), torch.from_numpy(Y), edge_index


def test_pyg_data_file_like_mag(tmp_path):
    x, y, edge_index = tensors()
    path = tmp_path / "US_labels_20.pt"
    torch.save(Data(x=x, edge_index=edge_index, y=y), path)
    domain = load_pyg_graph_file(path)
    assert domain.name == "US" and domain.mask.all()
    check_graph(domain.graph, X, Y, EDGES)

    plain = tmp_path / "graph.pt"
    torch.save({"x": x, "y": y, "edge_index": edge_index, "extra": torch.zeros(1)}, plain)
    domain = load_pyg_graph_file(plain, name="G")
    assert domain.name == "G"
    check_graph(domain.graph, X, Y, EDGES)


def test_mag_merged_class_is_trained_on_but_not_scored(tmp_path):
    x, _, edge_index = tensors()
    y = torch.from_numpy(np.where(Y == 2, 19, Y))  # the fixture's class 2 plays class 19
    for country in ("US", "CN"):
        torch.save(Data(x=x, edge_index=edge_index, y=y), tmp_path / f"{country}_labels_20.pt")
    domain = load_pyg_graph_file(tmp_path / "US_labels_20.pt", merged_class=19)
    np.testing.assert_array_equal(domain.graph.eval_mask, y.numpy() != 19)
    assert domain.mask.all() and (domain.graph.y == 19).any()  # still trained on
    assert load_pyg_graph_file(tmp_path / "US_labels_20.pt").graph.eval_mask is None
    out = tmp_path / "pair.npz"
    files = [str(tmp_path / f"{c}_labels_20.pt") for c in ("US", "CN")]
    prepare_real(*files, (0, 1), str(out), merged_class=19)
    for seed in (0, 1):
        source, target = load_pair(str(out), seed)
        for graph in (source, target):
            np.testing.assert_array_equal(graph.eval_mask, graph.y != 19)
            check_graph(graph, X, y.numpy(), EDGES)


class NotAGraph:  # a pickled foreign class: weights_only must refuse to rebuild it
    pass


def test_pyg_file_errors(tmp_path):
    x, y, edge_index = tensors()
    path = tmp_path / "CN_labels_20.pt"
    torch.save(Data(x=x, edge_index=edge_index, y=y), path)
    blob = path.read_bytes()
    path.write_bytes(blob[: len(blob) // 2])
    with raises_naming(path, "not a readable"):
        load_pyg_graph_file(path)
    torch.save({"x": x, "edge_index": edge_index}, path)
    with raises_naming(path, "missing"):
        load_pyg_graph_file(path)
    torch.save({"x": x, "y": y[:-1], "edge_index": edge_index}, path)
    with raises_naming(path, "labels"):
        load_pyg_graph_file(path)
    torch.save(NotAGraph(), path)
    with raises_naming(path, "not a readable"):
        load_pyg_graph_file(path)


# ogbn-arxiv-like tree: 10 papers, years 2005..2016, directed citations (one duplicate).
YEARS = np.array([2005, 2008, 2016, 2012, 2015, 2007, 2014, 2016, 2010, 2006])
ARXIV_EDGES = [(1, 0), (2, 1), (3, 0), (4, 3), (5, 0), (5, 9), (6, 2), (7, 6), (8, 5), (8, 1)]
ARXIV_EDGES += [(9, 0), (4, 2), (8, 3), (8, 3)]
AX = RNG.normal(size=(10, 4)).astype(np.float32)
AY = RNG.integers(0, 5, size=10)


def write_ogb_arxiv(root):
    raw = root / "ogbn_arxiv" / "raw"
    raw.mkdir(parents=True)
    tables = {
        "edge": np.array(ARXIV_EDGES),
        "node-feat": AX,
        "node-label": AY[:, None],
        "node_year": YEARS[:, None],
        "num-node-list": [[10]],
        "num-edge-list": [[len(ARXIV_EDGES)]],
    }
    for key, table in tables.items():
        pd.DataFrame(table).to_csv(raw / f"{key}.csv.gz", header=False, index=False)
    return raw


def eerm_reference(start, end):
    """EERM's procedure written as plain loops: papers up to `end`, ordered by degree."""
    degree = [0] * 10
    for u, v in ARXIV_EDGES:
        if YEARS[u] <= end and YEARS[v] <= end:
            degree[u] += 1
            degree[v] += 1
    nodes = [(i, degree[i]) for i in range(10) if YEARS[i] <= end]
    nodes.sort(key=lambda node: node[1], reverse=True)  # stable for equal degrees
    ids = {old: new for new, (old, _) in enumerate(nodes)}
    edges = [(ids[u], ids[v]) for u, v in ARXIV_EDGES if u in ids and v in ids]
    order = [old for old, _ in nodes]
    return AX[order], AY[order], edges, YEARS[order] > start


def test_ogb_arxiv_by_year_matches_eerm(tmp_path):
    write_ogb_arxiv(tmp_path)
    source, target = load_ogb_arxiv_by_year(tmp_path, (1950, 2010), (2014, 2016))
    for domain, (start, end) in ((source, (1950, 2010)), (target, (2014, 2016))):
        x, y, edges, mask = eerm_reference(start, end)
        assert domain.name == f"arxiv_{start}_{end}"
        check_graph(domain.graph, x, y, edges)
        np.testing.assert_array_equal(domain.mask, mask)
    assert source.graph.num_nodes == 5 and source.mask.all()
    assert target.graph.num_nodes == 10 and target.mask.sum() == 3  # 2015 and 2016 papers


def test_ogb_arxiv_errors(tmp_path):
    raw = write_ogb_arxiv(tmp_path)
    feat = raw / "node-feat.csv.gz"
    blob = feat.read_bytes()
    feat.write_bytes(blob[: len(blob) - 12])  # gzip stream cut short
    with raises_naming(feat):
        load_ogb_arxiv_by_year(tmp_path)
    feat.write_bytes(blob)
    pd.DataFrame([[11]]).to_csv(raw / "num-node-list.csv.gz", header=False, index=False)
    with raises_naming(feat, "count files say 11"):
        load_ogb_arxiv_by_year(tmp_path)
    pd.DataFrame([[10]]).to_csv(raw / "num-node-list.csv.gz", header=False, index=False)
    with pytest.raises(ValueError, match="start < end"):
        load_ogb_arxiv_by_year(raw, (2016, 2014))
