"""SBD's claims, checked against criteria written in the config before the run.

Kinds (``papers.sbd.claims.<id>.kind``):
``exact_reconstruction`` (mismatched cells of to_sparse() vs A, summed over every graph and
method), ``greedy_descent`` (trace steps with gain ≤ 0 or a cost that does not fall),
``planted_recovery`` (worst seed's mean best Jaccard at the lowest noise of the noise
study), ``recovery_degradation`` (grid steps where more noise raises the mean Jaccard by
more than a tolerance), ``compression`` (CF of a method on a graph), ``signed_vs_unsigned``
(CF difference of two methods on a graph), ``spmm_speedup`` (median speedup over CSR, or
its fraction of the CF bound, at one d), ``speedup_bound`` (largest speedup / CF over every
graph, method and d), ``spmm_error`` (largest relative error of the factorised product)
and ``not_tested``.
"""

from __future__ import annotations

import numpy as np

from repro.common.claims import Claim, check_spec, not_tested, run_claims
from repro.common.io import read_json, write_json
from repro.sbd.recovery import noise_grid


def _entries(metrics):
    for dataset, m in metrics.items():
        for method, entry in m["methods"].items():
            yield dataset, method, entry


def _entry(spec, metrics):
    m = metrics.get(spec["dataset"], {}).get("methods", {})
    return m.get(spec.get("method", ""))


def _exact(cid, spec, metrics, noise):
    bad = {f"{d}/{m}": e["mismatched_cells"] for d, m, e in _entries(metrics)}
    return check_spec(
        cid,
        spec,
        sum(bad.values()),
        f"{len(bad)} decompositions checked; " + ", ".join(f"{k}: {v}" for k, v in bad.items()),
    )


def _descent(cid, spec, metrics, noise):
    violations, steps = 0, 0
    for _, _, e in _entries(metrics):
        costs = [e["nnz"]] + [t["cost"] for t in e["trace"]]
        steps += len(e["trace"])
        violations += sum(t["gain"] <= 0 for t in e["trace"])
        violations += sum(b >= a for a, b in zip(costs, costs[1:], strict=False))
    final = all(
        (e["trace"][-1]["cost"] if e["trace"] else e["nnz"]) == e["cost"]
        for _, _, e in _entries(metrics)
    )
    return check_spec(
        cid,
        spec,
        violations + (0 if final else 1),
        f"{steps} accepted factors; final trace cost equals the stored cost: {final}",
    )


def _lowest_noise_rows(noise, method):
    rows = [r for r in noise["rows"] if r["method"] == method]
    low = min((r["deletion"], r["background"]) for r in rows)
    return low, [r for r in rows if (r["deletion"], r["background"]) == low]


def _recovery(cid, spec, metrics, noise):
    (d, b), rows = _lowest_noise_rows(noise, spec["method"])
    per_seed = {r["seed"]: r["mean_best_jaccard"] for r in rows}
    return check_spec(
        cid,
        spec,
        min(per_seed.values()),
        f"{spec['method']}, deletion {d:g}, background {b:g}; per seed: "
        + ", ".join(f"{s}: {v:.3f}" for s, v in per_seed.items()),
    )


def _degradation(cid, spec, metrics, noise):
    dels, bgs, grid = noise_grid(noise, spec["method"])
    tol = spec.get("tolerance", 0.02)
    rises = int((np.diff(grid, axis=0) > tol).sum() + (np.diff(grid, axis=1) > tol).sum())
    below = [
        f"({d:g}, {b:g}): {grid[i, j]:.2f}"
        for i, d in enumerate(dels)
        for j, b in enumerate(bgs)
        if grid[i, j] < 0.9
    ]
    return check_spec(
        cid,
        spec,
        rises,
        f"{spec['method']}; mean Jaccard rises by > {tol} in {rises} "
        f"grid steps; (deletion, background) cells below 0.9: {', '.join(below) or 'none'}",
    )


def _compression(cid, spec, metrics, noise):
    e = _entry(spec, metrics)
    if e is None:
        return not_tested(cid, spec["claim"], f"{spec['dataset']}/{spec['method']} not in this run")
    return check_spec(
        cid,
        spec,
        e["cf"],
        f"{spec['dataset']}/{spec['method']}: CF {e['cf']:.2f}, "
        f"CF_bytes {e['cf_bytes']:.2f}, {e['rank']} factors, nnz(R) {e['residual_nnz']} of "
        f"nnz(A) {e['nnz']}",
    )


def _signed_vs_unsigned(cid, spec, metrics, noise):
    m = metrics.get(spec["dataset"], {}).get("methods", {})
    if spec["method"] not in m or spec["baseline"] not in m:
        return not_tested(cid, spec["claim"], f"{spec['dataset']} lacks a method in this run")
    a, b = m[spec["method"]]["cf"], m[spec["baseline"]]["cf"]
    return check_spec(
        cid,
        spec,
        a - b,
        f"{spec['dataset']}: CF {spec['method']} {a:.2f} vs {spec['baseline']} {b:.2f}",
    )


def _speedup(cid, spec, metrics, noise):
    e = _entry(spec, metrics)
    if e is None:
        return not_tested(cid, spec["claim"], f"{spec['dataset']}/{spec['method']} not in this run")
    r = next((r for r in e["spmm"] if r["d"] == spec["d"]), None)
    if r is None or (
        spec["backend"] == "torch"
        and spec.get("device")
        and not r["device"].startswith(spec["device"])
    ):
        where = r["device"] if r else "no timing"
        return not_tested(
            cid, spec["claim"], f"needs d={spec['d']} on {spec.get('device')}; this run: {where}"
        )
    speedup = r[f"speedup_{spec['backend']}"]
    base = "scipy_csr" if spec["backend"] == "scipy" else "torch_csr"
    fraction = speedup / e["cf"]
    measured = fraction if spec.get("measure") == "fraction_of_cf" else speedup
    return check_spec(
        cid,
        spec,
        measured,
        f"{spec['dataset']}, d={spec['d']}, {r['device']}: {base} "
        f"{r[base]['median_ms']:.3f} ms vs SBD {r['sbd_' + spec['backend']]['median_ms']:.3f}"
        f" ms (medians), speedup {speedup:.2f}, CF {e['cf']:.2f}, speedup/CF {fraction:.2f}",
    )


def _bound(cid, spec, metrics, noise):
    """Largest speedup / CF over the claim's backend (all when unset); the other backend's
    largest ratio is reported in the details either way."""
    ratios = {
        f"{d}/{m}/d={r['d']}/{k}": r[f"speedup_{k}"] / e["cf"]
        for d, m, e in _entries(metrics)
        for r in e["spmm"]
        for k in ("scipy", "torch")
    }
    chosen = {k: v for k, v in ratios.items() if k.endswith(spec.get("backend", ""))}
    others = {k: v for k, v in ratios.items() if k not in chosen}
    worst = max(chosen, key=chosen.get)
    details = f"largest at {worst} over {len(chosen)} timings"
    if others:
        other = max(others, key=others.get)
        details += f"; not checked: largest {others[other]:.2f} at {other}"
    return check_spec(cid, spec, chosen[worst], details)


def _error(cid, spec, metrics, noise):
    errs = {
        f"{d}/{m}/d={r['d']}": max(r["rel_error_sbd_scipy"], r["rel_error_sbd_torch"])
        for d, m, e in _entries(metrics)
        for r in e["spmm"]
    }
    worst = max(errs, key=errs.get)
    return check_spec(cid, spec, errs[worst], f"largest at {worst} (fp32 vs float64 CSR product)")


def _reads_metrics_and_noise(handler):
    return lambda cid, spec, inputs: handler(cid, spec, *inputs)


# The claim kinds of papers.sbd.claims, each handler(id, spec, (metrics, noise study)).
KINDS = {
    kind: _reads_metrics_and_noise(handler)
    for kind, handler in {
        "exact_reconstruction": _exact,
        "greedy_descent": _descent,
        "planted_recovery": _recovery,
        "recovery_degradation": _degradation,
        "compression": _compression,
        "signed_vs_unsigned": _signed_vs_unsigned,
        "spmm_speedup": _speedup,
        "speedup_bound": _bound,
        "spmm_error": _error,
    }.items()
}


def check_claims(specs: dict, metrics_paths: dict, noise_path, output) -> list[Claim]:
    metrics = {name: read_json(path) for name, path in metrics_paths.items()}
    noise = read_json(noise_path)
    claims = run_claims(specs, KINDS, (metrics, noise))
    write_json(output, claims)
    return claims
