"""PLSA estimator cost at MAG scale and beyond: k = 20 classes, one thread.

Synthetic but planted: class prior from a Dirichlet, features z = 2 e_y + N(0, I) and their
exact (so calibrated) posteriors as node probabilities (accuracy ≈ 0.57), edges drawn cell
by cell from a random pair distribution pi^T. Every part runs in a fresh process, so that
its peak resident memory (ru_maxrss, graph included) is its own. It prints:

1. at |E| = 10^6: seconds per EM iteration of the chunked EM (repro.plsa.em) and of the
   unchunked one it replaced (G_u, G_v and a buffer: 3 E k float64, kept here as the
   baseline), their ratios and peaks, and the largest |difference| of their pi after 50
   plain iterations from the same start (rounding only: ~1e-17);
2. the chunk size sweep behind repro.plsa.estimators.CHUNK_EDGES;
3. at |E| = 10^7 (issue 17: target <= 2 GB peak, <= 2 s per iteration): the chunked EM's
   seconds per iteration and peak;
4. EM passes to tol 1e-6 with and without SQUAREM, the exact moment-matching QP at k = 20
   (400 variables, C from 10^5 source edges), and a straightforward E x k x k EM against
   ours on 10^5 edges.

Run: ``python benchmarks/plsa_estimators.py [--edges 1000000] [--large-edges 10000000]``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy loads BLAS (inherited by the workers)

import argparse  # noqa: E402
import multiprocessing  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from repro.common.timing import best_time  # noqa: E402
from repro.plsa.em import plsa_estimate  # noqa: E402
from repro.plsa.estimators import (  # noqa: E402
    CHUNK_EDGES,
    moment_matching_estimate,
    pair_confusion,
)

K = 20


def _graph(rng, n: int, edges: int, prior: np.ndarray, pi: np.ndarray):
    y = rng.choice(K, size=n, p=prior)
    # features z = 2 e_y + N(0, I): the exact posterior softmax(2 z + log prior) is calibrated
    logits = 2.0 * (2.0 * np.eye(K)[y] + rng.standard_normal((n, K))) + np.log(prior)
    P = np.exp(logits - logits.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    members = [np.flatnonzero(y == c) for c in range(K)]
    cells = np.sort(rng.choice(K * K, size=edges, p=pi.ravel()))
    bounds = np.searchsorted(cells, np.arange(K * K + 1))
    del cells
    edge_index = np.empty((2, edges), dtype=np.int64)
    for cell in range(K * K):
        at = slice(bounds[cell], bounds[cell + 1])
        for side, cls in enumerate(divmod(cell, K)):
            pool = members[cls]
            edge_index[side, at] = pool[rng.integers(0, pool.size, at.stop - at.start)]
    edge_index = edge_index[:, rng.permutation(edges)]  # no accidental locality
    return P, y, edge_index


def _problem(edges: int, nodes: int, source_edges: int = 0):
    rng = np.random.default_rng(0)
    prior = rng.dirichlet(np.full(K, 5.0))
    pi_s = rng.dirichlet(np.ones(K * K)).reshape(K, K)
    pi_t = rng.dirichlet(np.ones(K * K)).reshape(K, K)
    P_t, _, e_t = _graph(rng, nodes, edges, prior, pi_t)
    out = {"P": P_t, "edge_index": e_t, "prior": prior, "pi_t": pi_t}
    if source_edges:
        out["P_s"], out["y_s"], out["e_s"] = _graph(rng, nodes, source_edges, prior, pi_s)
    return out


def _unchunked_em(P, edge_index, prior, iterations: int) -> np.ndarray:
    """The EM before issue 17: whole E x k arrays G_u, G_v and a buffer, from uniform."""
    g = P / prior
    G_u, G_v = g[edge_index[0]], g[edge_index[1]]
    buf, z = np.empty_like(G_u), np.empty(G_u.shape[0])
    pi = np.full((K, K), 1.0 / K**2)
    for _ in range(iterations):
        np.matmul(G_u, pi, out=buf)
        np.einsum("ej,ej->e", buf, G_v, out=z)
        np.divide(G_v, z[:, None], out=buf)
        pi = pi * (G_u.T @ buf) / z.size
        pi /= pi.sum()
    return pi


def _naive_em(P, edge_index, prior, iterations: int) -> None:
    g = P / prior
    gu, gv = g[edge_index[0]], g[edge_index[1]]
    pi = np.full((K, K), 1 / K**2)
    for _ in range(iterations):
        joint = pi[None] * gu[:, :, None] * gv[:, None, :]  # E x k x k
        pi = (joint / joint.sum(axis=(1, 2))[:, None, None]).mean(axis=0)


def _per_iteration(run, iters: int, repeats: int, clock=time.perf_counter) -> float:
    """(time of 1 + iters EM passes - time of 1 pass) / iters: excludes the setup."""

    def best(m):
        return best_time(lambda: run(m), repeats, clock=clock)

    return (best(1 + iters) - best(1)) / iters


def _chunked_runner(p, chunk=CHUNK_EDGES):
    def run(m):
        return plsa_estimate(
            p["P"],
            p["edge_index"],
            p["prior"],
            tol=0.0,
            max_iter=m,
            accelerate=False,
            chunk_edges=chunk,
        )[0]

    return run


def part_em(args: dict) -> dict:
    """One EM implementation at one size: time per iteration and (``compare``) pi after 50
    plain iterations from uniform."""
    p = _problem(args["edges"], args["nodes"])
    if args["variant"] == "unchunked":
        run = lambda m: _unchunked_em(p["P"], p["edge_index"], p["prior"], m)  # noqa: E731
    else:
        run = _chunked_runner(p)
    out = {
        "per_iter": _per_iteration(run, args["iters"], args["repeats"]),
        # CPU seconds of this one-thread process: what "one core" costs when others load it
        "per_iter_cpu": _per_iteration(run, args["iters"], args["repeats"], time.process_time),
    }
    if args.get("compare"):
        out["pi_50"] = run(50)
    return out


def part_chunk_sweep(args: dict) -> dict:
    p = _problem(args["edges"], args["nodes"])
    return {
        chunk: _per_iteration(_chunked_runner(p, chunk), 3, args["repeats"])
        for chunk in (2**12, 2**13, 2**14, 2**16, 2**18)
    }


def part_others(args: dict) -> dict:
    """SQUAREM vs plain EM, the exact QP, and the naive E x k x k EM at 10^5 edges."""
    p = _problem(args["edges"], args["nodes"], source_edges=args["source_edges"])
    lines = []
    for accelerate in (False, True):
        started = time.perf_counter()
        pi_hat, info = plsa_estimate(
            p["P"], p["edge_index"], p["prior"], tol=1e-6, accelerate=accelerate
        )
        lines.append(
            f"EM to tol 1e-6, SQUAREM={accelerate}: {info['iterations']} passes, "
            f"{time.perf_counter() - started:.1f} s, converged={info['converged']}, "
            f"L1 to planted pi^T {np.abs(pi_hat - p['pi_t']).sum():.4f}"
        )
    started = time.perf_counter()
    confusion = pair_confusion(p["P_s"], p["y_s"], p["e_s"], K)
    lines.append(
        f"MM: C (400x400) from {args['source_edges']:,} source edges in "
        f"{time.perf_counter() - started:.2f} s"
    )
    y_s, e_s = p["y_s"], p["e_s"]
    pi_source = np.bincount(y_s[e_s[0]] * K + y_s[e_s[1]], minlength=K * K) / e_s.shape[1]
    for lam in (0.0, 1.0):
        started = time.perf_counter()
        pi_hat, info = moment_matching_estimate(
            p["P"], p["edge_index"], confusion, pi_source, lam=lam
        )
        lines.append(
            f"MM QP lam={lam:g}: {time.perf_counter() - started:.2f} s (moments over "
            f"{args['edges']:,} edges included), status {info['status']}, "
            f"{info['iterations']} active-set iterations, KKT residual "
            f"{info['kkt_residual']:.1e}, L1 to planted {np.abs(pi_hat - p['pi_t']).sum():.4f}"
        )
    small = {**p, "edge_index": p["edge_index"][:, : args["naive_edges"]]}
    ours = _per_iteration(_chunked_runner(small), 10, args["repeats"])
    naive = _per_iteration(
        lambda m: _naive_em(small["P"], small["edge_index"], p["prior"], m), 2, 1
    )
    lines.append(
        f"naive E x k x k EM at |E| = {args['naive_edges']:,} "
        f"({args['naive_edges'] * K * K * 8 / 2**20:.0f} MB per array): {naive:.3f} s/iter; "
        f"ours: {ours:.4f} s/iter; ratio naive/ours {naive / ours:.1f}x"
    )
    return {"lines": lines}


PARTS = {"em": part_em, "chunk_sweep": part_chunk_sweep, "others": part_others}


def _worker(name: str, args: dict, queue) -> None:
    result = PARTS[name](args)
    result["peak_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB
    queue.put(result)


def fresh(name: str, **args) -> dict:
    """PARTS[name](args) in a new process; its result plus that process's peak RSS."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_worker, args=(name, args, queue))
    process.start()
    result = queue.get()
    process.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edges", type=int, default=10**6)
    parser.add_argument("--nodes", type=int, default=200_000)
    parser.add_argument("--large-edges", type=int, default=10**7)
    parser.add_argument("--large-nodes", type=int, default=1_000_000)
    parser.add_argument("--source-edges", type=int, default=10**5)
    parser.add_argument("--naive-edges", type=int, default=10**5)
    parser.add_argument("--repeats", type=int, default=3, help="best of N, against load noise")
    args = parser.parse_args()
    size = {"edges": args.edges, "nodes": args.nodes, "repeats": args.repeats, "iters": 5}
    print(f"k = {K}, one thread, chunks of {CHUNK_EDGES} edges; each part in a fresh process")

    old = fresh("em", variant="unchunked", compare=True, **size)
    new = fresh("em", variant="chunked", compare=True, **size)
    print(
        f"|E| = {args.edges:,}: unchunked {old['per_iter']:.3f} s/iter "
        f"({old['per_iter_cpu']:.3f} CPU s), peak {old['peak_gb']:.2f} GB; chunked "
        f"{new['per_iter']:.3f} s/iter ({new['per_iter_cpu']:.3f} CPU s), peak "
        f"{new['peak_gb']:.2f} GB; ratios chunked/unchunked: time "
        f"{new['per_iter'] / old['per_iter']:.2f} "
        f"(CPU {new['per_iter_cpu'] / old['per_iter_cpu']:.2f}), "
        f"peak {new['peak_gb'] / old['peak_gb']:.2f}"
    )
    print(
        "equal to the unchunked EM: max |pi difference| after 50 iterations from uniform "
        f"{np.abs(new['pi_50'] - old['pi_50']).max():.1e} (pi entries average 1/400)"
    )

    sweep = fresh("chunk_sweep", **size)
    sweep.pop("peak_gb")
    print(
        f"chunk size sweep at |E| = {args.edges:,} (s/iter): "
        + ", ".join(f"{c}: {t:.3f}" for c, t in sweep.items())
    )

    large = fresh(
        "em",
        variant="chunked",
        edges=args.large_edges,
        nodes=args.large_nodes,
        repeats=1,
        iters=3,
    )
    print(
        f"|E| = {args.large_edges:,} ({args.large_nodes:,} nodes): chunked "
        f"{large['per_iter']:.2f} s/iter ({large['per_iter_cpu']:.2f} CPU s; target <= 2 s), "
        f"peak {large['peak_gb']:.2f} GB "
        f"(target <= 2 GB; unchunked would need {3 * args.large_edges * K * 8 / 1e9:.1f} GB "
        f"for G_u, G_v and a buffer alone)"
    )

    others = fresh("others", source_edges=args.source_edges, naive_edges=args.naive_edges, **size)
    for line in others["lines"]:
        print(line)
    print(f"peak RSS of that part: {others['peak_gb']:.2f} GB")


if __name__ == "__main__":
    main()
