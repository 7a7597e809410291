"""SBD's checks: properties that hold by construction unless there is a bug (reported
apart from the claims, never counted as reproduced). Handlers as in ``repro.sbd.claims``."""

from __future__ import annotations

from repro.common.claims import check_spec
from repro.sbd.oracles import PLANTED_TRUTH


def entries(metrics):
    for dataset, m in metrics.items():
        for method, entry in m["methods"].items():
            yield dataset, method, entry


def exact_reconstruction(cid, spec, inputs):
    """Mismatched cells over every data set's decompositions (the planted truth's too) and
    every study run, the study runs summed per study and method."""
    bad = {f"{d}/{m}": e["mismatched_cells"] for d, m, e in entries(inputs.metrics)}
    bad |= {
        f"{d}/{PLANTED_TRUTH}": doc[PLANTED_TRUTH]["mismatched_cells"]
        for d, doc in inputs.metrics.items()
        if PLANTED_TRUTH in doc
    }
    runs = len(bad)
    for study in ("noise", "sign"):
        rows = getattr(inputs, study)["rows"]
        runs += len(rows)
        for r in rows:
            key = f"{study} study/{r['method']}"
            bad[key] = bad.get(key, 0) + r.get("mismatched_cells", 0)
    return check_spec(
        cid,
        spec,
        sum(bad.values()),
        f"{runs} decompositions checked; " + ", ".join(f"{k}: {v}" for k, v in bad.items()),
    )


def greedy_descent(cid, spec, inputs):
    metrics = inputs.metrics
    violations, steps = 0, 0
    for _, _, e in entries(metrics):
        costs = [e["nnz"]] + [t["cost"] for t in e["trace"]]
        steps += len(e["trace"])
        violations += sum(t["gain"] <= 0 for t in e["trace"])
        violations += sum(b >= a for a, b in zip(costs, costs[1:], strict=False))
    final = all(
        (e["trace"][-1]["cost"] if e["trace"] else e["nnz"]) == e["cost"]
        for _, _, e in entries(metrics)
    )
    return check_spec(
        cid,
        spec,
        violations + (0 if final else 1),
        f"{steps} accepted factors; final trace cost equals the stored cost: {final}",
    )


def spmm_error(cid, spec, inputs):
    errs = {
        f"{d}/{m}/d={r['d']}": max(r["rel_error_sbd_scipy"], r["rel_error_sbd_torch"])
        for d, m, e in entries(inputs.metrics)
        for r in e["spmm"]
    }
    worst = max(errs, key=errs.get)
    return check_spec(cid, spec, errs[worst], f"largest at {worst} (fp32 vs float64 CSR product)")
