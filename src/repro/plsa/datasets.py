"""Real graph-domain-adaptation data sets, read from their published raw formats.

Every loader returns a :class:`Domain`: a name, a :class:`~repro.plsa.csbm.Graph` whose
``edge_index`` holds both directions of every undirected edge exactly once (sorted by source,
then target; no self loops) and a boolean ``mask`` of the nodes that are labelled for training
and evaluation (all nodes, except for Arxiv, where only papers inside the year window count).

Formats, as read by the public loading code of UDAGCN, Pair-Align and EERM/OGB:

* DBLP/ACM (UDAGCN, Google Drive archive): ``<name>/raw/<name>_docs.txt`` (one comma-separated
  row of bag-of-words values per node), ``<name>_edgelist.txt`` (``src,dst`` per line) and
  ``<name>_labels.txt`` (one integer per line).
* MAG by country (Pair-Align, Zenodo record 10681285): ``<CC>_labels_20.pt``, a torch-saved PyG
  ``Data(x, edge_index, y)`` of the directed citations inside one country. Label 19 is the
  merged class, which Pair-Align trains on but leaves out of the accuracy (``utils.py``,
  ``get_acc_score``): loaded with ``merged_class=19``, the graph's ``eval_mask`` drops it.
* ogbn-arxiv (OGB raw CSV): headerless ``raw/{edge,node-feat,node-label,node_year,
  num-node-list,num-edge-list}.csv.gz``, split by publication year as in EERM.
* Pileup (Delphes ROOT files, Zenodo record 8015774) is not read here, because uproot is not a
  dependency.

Raw files are validated before use. A truncated, corrupt or mismatched file raises a
ValueError that names it, and a missing file raises FileNotFoundError.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import pickle
import zlib
from collections.abc import Mapping

import numpy as np
import pandas as pd
import torch

from repro.plsa.csbm import Graph

PathLike = str | os.PathLike
# pandas' ParserError and EmptyDataError subclass ValueError; gzip raises EOFError/zlib.error.
_READ_ERRORS = (OSError, EOFError, zlib.error, ValueError, IndexError)
_TORCH_ERRORS = (RuntimeError, OSError, EOFError, pickle.UnpicklingError, ValueError)
ARXIV_FILES = ("edge", "node-feat", "node-label", "node_year", "num-node-list", "num-edge-list")


@dataclasses.dataclass(frozen=True, eq=False)
class Domain:
    name: str
    graph: Graph
    mask: np.ndarray  # (n,) bool: nodes whose labels may be used (train/validate/test)


def symmetrise(edge_index: np.ndarray, num_nodes: int) -> np.ndarray:
    """Both directions of every edge once, sorted, self loops and duplicates dropped."""
    src, dst = np.asarray(edge_index, dtype=np.int64)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    # One int64 key per directed pair; n^2 fits easily for n up to ~3e9.
    key = np.unique(np.concatenate([src * num_nodes + dst, dst * num_nodes + src]))
    return np.stack([key // num_nodes, key % num_nodes]).astype(np.int64)


def make_graph(x, y, edge_index, *, files) -> Graph:
    """Validate raw arrays and build the symmetrised graph; `files` (one path, or the paths of
    x, y and edge_index) are named in the errors."""
    fx, fy, fe = (files,) * 3 if isinstance(files, str | os.PathLike) else files
    x, y, edges = np.asarray(x), np.asarray(y), np.asarray(edge_index)
    if x.ndim != 2 or 0 in x.shape or not np.issubdtype(x.dtype, np.number):
        raise ValueError(f"{fx}: features must be a non-empty numeric (n, d) array, got {x.shape}")
    if not np.isfinite(x).all():  # a row cut short by truncation is padded with NaN
        raise ValueError(f"{fx}: features contain missing or non-finite values (truncated?)")
    n = x.shape[0]
    y = y.reshape(-1) if y.ndim == 2 and y.shape[1] == 1 else y
    if y.shape != (n,):
        raise ValueError(f"{fy}: labels of shape {y.shape}, but {fx} has {n} feature rows")
    if not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
        raise ValueError(f"{fy}: labels must be non-negative integers")
    if edges.ndim != 2 or edges.shape[0] != 2 or not np.issubdtype(edges.dtype, np.integer):
        raise ValueError(f"{fe}: edge_index must be an integer (2, E) array, got {edges.shape}")
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise ValueError(f"{fe}: edge endpoints outside [0, {n}) (mismatched files?)")
    return Graph(
        x=np.ascontiguousarray(x, dtype=np.float32),
        y=y.astype(np.int64),
        edge_index=symmetrise(edges, n),
    )


def _read_table(path: pathlib.Path, dtype, columns: int | None = None) -> np.ndarray:
    """A headerless comma-separated table (gzip when the name ends in .gz)."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        table = pd.read_csv(path, header=None, dtype=dtype).to_numpy()
    except _READ_ERRORS as err:
        raise ValueError(f"{path}: not a readable comma-separated table ({err})") from err
    if columns is not None and table.shape[1] != columns:
        raise ValueError(f"{path}: expected {columns} column(s), got {table.shape[1]}")
    return table


def _edge_table(path: pathlib.Path) -> np.ndarray:
    """(E, 2) node ids -> (2, E) int64. Read as floats: UDAGCN's reader accepts '12.0'."""
    table = _read_table(path, np.float64, columns=2)
    if not np.isfinite(table).all() or np.any(table != np.round(table)):
        raise ValueError(f"{path}: edge ids must be integers (truncated line?)")
    return table.T.astype(np.int64)


def _find_dir(root: pathlib.Path, marker: str, candidates: list[pathlib.Path]) -> pathlib.Path:
    for folder in candidates:
        if (folder / marker).is_file():
            return folder
    tried = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"{root}: no {marker} in any of {tried}")


def load_udagcn(path_or_dir: PathLike, domain: str) -> Domain:
    """DBLP or ACM in UDAGCN's layout. `path_or_dir` is the data root holding ``<domain>/raw``
    (Pair-Align's ``data_files``), the domain folder, or the raw folder itself."""
    name, root = domain.lower(), pathlib.Path(path_or_dir)
    raw = _find_dir(root, f"{name}_docs.txt", [root / name / "raw", root / "raw", root])
    docs, labels, edges = (raw / f"{name}_{part}.txt" for part in ("docs", "labels", "edgelist"))
    x = _read_table(docs, np.float32)
    y = _read_table(labels, np.int64, columns=1)
    graph = make_graph(x, y, _edge_table(edges), files=(docs, labels, edges))
    return Domain(name, graph, np.ones(graph.num_nodes, dtype=bool))


def _pyg_safe_globals() -> list:
    """The PyG classes a pickled ``Data`` refers to; none of them runs code when rebuilt."""
    try:
        from torch_geometric.data import Data
        from torch_geometric.data.data import DataEdgeAttr, DataTensorAttr
        from torch_geometric.data.storage import GlobalStorage
    except ImportError:  # plain dicts of tensors still load
        return []
    return [Data, DataEdgeAttr, DataTensorAttr, GlobalStorage]


def _as_numpy(value) -> np.ndarray:
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


def load_pyg_graph_file(
    path: PathLike, *, name: str | None = None, merged_class: int | None = None
) -> Domain:
    """A torch-saved PyG ``Data`` or dict with x, y and edge_index (e.g. Pair-Align's MAG
    ``US_labels_20.pt``). Loaded with ``weights_only=True``; only those three keys are read.
    The default name is the file name up to ``_labels`` (``US``). Nodes of ``merged_class``
    are kept for training and left out of the graph's ``eval_mask`` (accuracy)."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        with torch.serialization.safe_globals(_pyg_safe_globals()):
            obj = torch.load(path, map_location="cpu", weights_only=True)
    except _TORCH_ERRORS as err:
        raise ValueError(f"{path}: not a readable torch-saved graph ({err})") from err
    fields = obj.to_dict() if hasattr(obj, "to_dict") else obj
    missing = {"x", "y", "edge_index"} - set(fields) if isinstance(fields, Mapping) else None
    if missing is None or missing:
        raise ValueError(f"{path}: expected a Data/dict with x, y, edge_index; missing {missing}")
    x, y, edges = (_as_numpy(fields[key]) for key in ("x", "y", "edge_index"))
    graph = make_graph(x, y, edges, files=path)
    if merged_class is not None:
        graph = dataclasses.replace(graph, eval_mask=graph.y != merged_class)
    name = name or path.name.split("_labels")[0].removesuffix(".pt")
    return Domain(name, graph, np.ones(graph.num_nodes, dtype=bool))


def read_ogb_arxiv_raw(root: PathLike) -> dict:
    """The raw ogbn-arxiv arrays; `root` holds ``ogbn_arxiv/raw``, ``arxiv/raw``, ``raw`` or
    the CSV files themselves. The edge list stays directed, as OGB ships it."""
    root = pathlib.Path(root)
    candidates = [root / "ogbn_arxiv" / "raw", root / "arxiv" / "raw", root / "raw", root]
    raw = _find_dir(root, "edge.csv.gz", candidates)
    files = {key: raw / f"{key}.csv.gz" for key in ARXIV_FILES}
    n = int(_read_table(files["num-node-list"], np.int64, columns=1)[0, 0])
    num_edges = int(_read_table(files["num-edge-list"], np.int64, columns=1)[0, 0])
    out = {
        "x": _read_table(files["node-feat"], np.float32),
        "y": _read_table(files["node-label"], np.int64, columns=1)[:, 0],
        "year": _read_table(files["node_year"], np.int64, columns=1)[:, 0],
        "edge_index": _edge_table(files["edge"]),
    }
    for key, file, want in (
        ("x", "node-feat", n),
        ("y", "node-label", n),
        ("year", "node_year", n),
        ("edge_index", "edge", num_edges),
    ):
        got = out[key].shape[-1 if key == "edge_index" else 0]
        if got != want:
            raise ValueError(f"{files[file]}: {got} rows, but the count files say {want}")
    out["files"] = files  # kept so later errors can name the file
    return out


def arxiv_year_domain(raw: dict, years: tuple[int, int]) -> Domain:
    """EERM's year split: the graph of all papers up to ``years[1]``, nodes ordered by degree
    (descending, ties by id), and the mask of papers published after ``years[0]``."""
    start, end = (int(v) for v in years)
    if start >= end:
        raise ValueError(f"year window must satisfy start < end, got {years}")
    year, edges = raw["year"], raw["edge_index"]
    kept = year <= end
    inside = edges[:, kept[edges[0]] & kept[edges[1]]]
    degree = np.bincount(inside.ravel(), minlength=len(year))  # EERM counts both endpoints
    nodes = np.flatnonzero(kept)
    order = nodes[np.argsort(-degree[nodes], kind="stable")]
    new_id = np.full(len(year), -1, dtype=np.int64)
    new_id[order] = np.arange(len(order))
    files = raw["files"]
    graph = make_graph(
        raw["x"][order],
        raw["y"][order],
        new_id[inside],
        files=(files["node-feat"], files["node-label"], files["edge"]),
    )
    return Domain(f"arxiv_{start}_{end}", graph, year[order] > start)


def load_ogb_arxiv_by_year(
    root: PathLike,
    years_source: tuple[int, int] = (1950, 2011),
    years_target: tuple[int, int] = (2014, 2016),
) -> tuple[Domain, Domain]:
    """Source and target domains of Pair-Align's Arxiv setting (``prepare_arxiv`` with
    ``[1950, src_end_year]`` and ``[start_year, end_year]``)."""
    raw = read_ogb_arxiv_raw(root)
    return arxiv_year_domain(raw, years_source), arxiv_year_domain(raw, years_target)
