"""SBD at the full-scale graph sizes (issue 17, items 6 and 7): loading and decomposition.

1. Loading: a gzipped SNAP edge list of ``--load-edges`` edges (a comment header, then
   tab-separated ids of 10^6 nodes scattered over [0, 2^31)) read by
   ``repro.sbd.graphs.read_snap``. Target at 10^7 edges: <= 30 s and <= 2 GB.
2. Decomposition of planted graphs of about 10^5, 10^6 and 10^7 edges, built like the
   workflow's scaling study (n = 15 x blocks nodes, blocks of side 10-40, 10 % nested
   negative, 5 % deletions, background 1e-5, seed 0), with the full-scale greedy of
   config/full.yaml (min-hash, 8 bands x 2 rows, 20 000 groups and 50 degree seeds per
   sign, per_round 0, round_ratio 0.5). Target: 10^7 edges in <= 600 s and <= 8 GB on one
   core; the fitted exponent of time and memory against edges.
3. With ``--reference REV``: the same graphs up to ``--reference-up-to`` edges (and the
   loading at ``--reference-load-edges``) with the code of git revision REV (today's code
   before the change, extracted with git archive). Criterion, written before the run: CF
   within 1 % of the reference's and 0 mismatched cells of the reconstruction.

Every measurement runs in a fresh one-thread process, so its peak resident memory
(VmHWM, input included) is its own; seconds are wall and process CPU time (the CPU
time is the one to trust on a shared machine). Run:
``python benchmarks/sbd_decompose.py [--edges 1e5 1e6 1e7] [--reference 317f026]``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy loads BLAS (inherited by the workers)

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EDGES_PER_BLOCK = 525  # planted cells per block of side 10-40 after deletions, measured
GREEDY = dict(degree_seeds=50, max_iter=10, min_gain=1, minhash_bands=8, minhash_rows=2,
              minhash_candidates=20000, per_round=0, round_ratio=0.5)  # fmt: skip


def _peak_mb() -> float:
    """This process's peak resident memory (VmHWM: reset by exec, unlike ru_maxrss, which a
    child started by a big parent would inherit)."""
    status = Path("/proc/self/status").read_text()
    return (
        int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")))
        / 1024
    )


def _child(kind: str, path: str) -> dict:
    """One measurement in this process (which imports whichever repro PYTHONPATH gives)."""
    import time

    import scipy.sparse as sp

    from repro.sbd import graphs
    from repro.sbd.greedy import GreedyConfig, decompose

    wall, cpu = time.perf_counter(), time.process_time()
    if kind == "load":
        A = graphs.read_snap(path)
        out = {"nodes": A.shape[0], "nnz": int(A.nnz), "total": int(A.sum())}
    else:
        A = sp.load_npz(path)
        result = decompose(A, GreedyConfig(**GREEDY))
        # revisions before the trace moved onto the Decomposition return (dec, trace)
        dec, trace = result if isinstance(result, tuple) else (result, result.trace)
        out = {"nnz": int(A.nnz), "rank": dec.rank, "rounds": trace[-1]["round"] + 1,
               "cf": A.nnz / dec.cost}  # fmt: skip
    out |= {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
            "peak_mb": _peak_mb()}  # fmt: skip
    if kind == "decompose":  # after the peak was read: the check's memory is not the method's
        out["mismatched_cells"] = int((dec.to_sparse() != A).nnz)
    return out


def measure(kind: str, path: Path, src: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"{kind} {path} with {src} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def write_edge_list(path: Path, edges: int, seed: int = 0) -> None:
    import pandas as pd

    rng = np.random.default_rng(seed)
    ids = rng.choice(2**31 - 1, size=10**6, replace=False)
    pairs = pd.DataFrame(ids[rng.integers(0, len(ids), size=(edges, 2))])
    import gzip

    with gzip.open(path, "wt", compresslevel=6) as handle:
        handle.write(f"# synthetic SNAP-style edge list\n# Nodes: {len(ids)} Edges: {edges}\n")
        handle.write("# FromNodeId\tToNodeId\n")
        pairs.to_csv(handle, sep="\t", header=False, index=False)


def write_planted(path: Path, edges: float) -> None:
    import scipy.sparse as sp

    from repro.sbd.planted import PlantedConfig, plant

    blocks = max(1, round(edges / EDGES_PER_BLOCK))
    A, _ = plant(PlantedConfig(m=15 * blocks, blocks=blocks, side_min=10, side_max=40,
                               deletion=0.05, background=1e-5, seed=0))  # fmt: skip
    sp.save_npz(path, A, compressed=False)


def reference_src(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "src"], capture_output=True,
                             check=True).stdout  # fmt: skip
    into.mkdir()
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def exponent(xs, ys) -> float:
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0]) if len(xs) > 1 else float("nan")


def _row(label, r):
    return (f"  {label:>9}: {r['wall_s']:7.1f} s wall, {r['cpu_s']:7.1f} s CPU, "
            f"peak {r['peak_mb']:7.0f} MB")  # fmt: skip


def main(args) -> None:
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ref = reference_src(args.reference, tmp / "ref") if args.reference else None
        print("1. loading a gzipped SNAP edge list (read_snap)")
        for edges in sorted({int(args.load_edges), int(args.reference_load_edges)}):
            path = tmp / f"edges_{edges}.txt.gz"
            write_edge_list(path, edges)
            for label, src in (("new", REPO / "src"), ("reference", ref)):
                if src is None or (
                    label == "reference" and edges != int(args.reference_load_edges)
                ):
                    continue
                r = measure("load", path, src)
                print(_row(label, r) + f"  [{edges:.0e} edges, {r['nodes']} nodes]")
            path.unlink()
        print("2. decomposition (full-scale greedy, one thread)")
        new = []
        for edges in args.edges:
            path = tmp / f"planted_{edges:.0e}.npz"
            write_planted(path, edges)
            runs = {"new": measure("decompose", path, REPO / "src")}
            if ref is not None and edges <= args.reference_up_to:
                runs["reference"] = measure("decompose", path, ref)
            for label, r in runs.items():
                print(_row(label, r) + f"  [nnz {r['nnz']}: {r['rank']} factors, "
                      f"{r['rounds']} rounds, CF {r['cf']:.4f}, "
                      f"{r['mismatched_cells']} mismatched cells]")  # fmt: skip
            if "reference" in runs:
                change = runs["new"]["cf"] / runs["reference"]["cf"] - 1
                exact = runs["new"]["mismatched_cells"] == 0
                ok = abs(change) <= 0.01 and exact
                speed = runs["reference"]["cpu_s"] / runs["new"]["cpu_s"]
                print(f"  CF change {100 * change:+.3f} %, exact {exact}, reference/new CPU "
                      f"time {speed:.2f}x (criterion |CF change| <= 1 % and exact: "
                      f"{'met' if ok else 'NOT met'})")  # fmt: skip
            new.append(runs["new"])
            path.unlink()
        nnz, cpu = [r["nnz"] for r in new], [r["cpu_s"] for r in new]
        steps = ", ".join(
            f"{exponent(nnz[k : k + 2], cpu[k : k + 2]):.2f}" for k in range(len(nnz) - 1)
        )
        print(f"growth exponent vs edges (least squares, logs): CPU time {exponent(nnz, cpu):.2f},"
              f" wall time {exponent(nnz, [r['wall_s'] for r in new]):.2f}, peak memory "
              f"{exponent(nnz, [r['peak_mb'] for r in new]):.2f}; CPU time between consecutive "
              f"sizes: {steps}")  # fmt: skip
        big = max(new, key=lambda r: r["nnz"])
        ok = big["cpu_s"] <= 600 and big["peak_mb"] <= 8192 and big["mismatched_cells"] == 0
        print(f"largest graph ({big['nnz']} edges): {big['cpu_s']:.0f} s CPU, "
              f"{big['peak_mb'] / 1024:.2f} GB (target <= 600 s, <= 8 GB, exact: "
              f"{'met' if ok else 'NOT met'})")  # fmt: skip
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=float, nargs="+", default=[1e5, 1e6, 1e7])
    parser.add_argument("--load-edges", type=float, default=1e7)
    parser.add_argument("--reference", help="git revision of the code to compare with")
    parser.add_argument("--reference-up-to", type=float, default=1e6)
    parser.add_argument("--reference-load-edges", type=float, default=1e6)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child)))
    else:
        main(args)
