"""SBD's claims and checks, judged against criteria written in the config before the run.

Checks (``papers.sbd.checks``; hold by construction unless there is a bug):
``exact_reconstruction`` (mismatched cells of to_sparse() vs A over every graph and method),
``greedy_descent`` (trace steps with gain ≤ 0 or a cost that does not fall), ``spmm_error``
(largest relative error of the factorised product). Claims (``papers.sbd.claims``):
``planted_recovery`` (worst seed's mean best Jaccard at one noise-study cell),
``recovery_degradation`` (the seed-mean Jaccard's drop from the least to the most noise,
with no rise beyond a tolerance on the way), ``compression`` (CF of a method on a graph),
``signed_vs_unsigned`` (paired CF difference over the seeds of one sign-study setting, three-way
with the criterion's margin ``delta`` from the config; the other settings, each isolating
another cause, in the details), ``spmm_speedup`` (speedup over CSR of the fastest of
interleaved calls, or its fraction of the CF bound, at one d; :mod:`repro.sbd.spmm_bench`),
``speedup_bound`` (largest speedup / CF over every graph, method and d); and the shared
``not_tested``. A claim's ``explorations`` (data sets added after the pre-registered one) are
reported in its details, never as its verdict.

A ``method`` may also name an oracle of :mod:`repro.sbd.oracles` (the planted truth and its
thinned copy), which the claims' controls judge with the same handlers. A decomposition that
does not reproduce its matrix exactly is a failed run: the claims that read it are not
reproduced, naming it (and the ``exact_reconstruction`` check fails).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from repro.common.claims import (
    CONTRADICTED,
    Claim,
    check_spec,
    check_worst,
    mean_claim,
    not_tested,
    over_seeds,
    paired_claim,
    run_claims,
)
from repro.common.io import read_json, write_json
from repro.common.stats import paired_difference
from repro.sbd import checks
from repro.sbd.oracles import PLANTED_TRUTH
from repro.sbd.recovery import noise_cells, noise_grid


@dataclasses.dataclass(frozen=True)
class Inputs:
    metrics: dict  # data set -> its metrics document
    noise: dict  # the noise study
    sign: dict  # the sign study


def _lookup(document: dict, method: str):
    """A method's entry in a data set's metrics; the planted truth's where it is asked for."""
    if method == PLANTED_TRUTH:
        return document.get(PLANTED_TRUTH)
    return document.get("methods", {}).get(method)


def _entry(spec, metrics):
    return _lookup(metrics.get(spec["dataset"], {}), spec.get("method", ""))


def _not_exact(entry) -> int:
    return int(entry.get("mismatched_cells", 0))


def _failed_rows(rows) -> str:
    """The study rows whose decomposition does not reproduce its graph: failed runs."""
    labels = ("setting", "deletion", "background")
    return "; ".join(
        f"failed run: {r['method']}, "
        + ", ".join(f"{k} {r[k]:g}" if k != "setting" else r[k] for k in labels if k in r)
        + f", seed {r['seed']}: the decomposition misses {_not_exact(r)} cells of the graph"
        for r in rows
        if _not_exact(r)
    )


def _recovery(cid, spec, inputs):
    """Worst seed's mean best Jaccard at the claim's (deletion, background) cell."""
    cell = (spec["deletion"], spec["background"])
    rows = [
        r
        for r in inputs.noise["rows"]
        if r["method"] == spec["method"] and (r["deletion"], r["background"]) == cell
    ]
    if not rows:
        return check_spec(
            cid, spec, None, f"the noise study has no cell (deletion, background) = {cell}"
        )
    per_seed = {r["seed"]: None if _not_exact(r) else r["mean_best_jaccard"] for r in rows}
    worst, reason = over_seeds(per_seed, min)
    reason = _join(_failed_rows(rows), reason)
    details = f"{spec['method']}, deletion {cell[0]:g}, background {cell[1]:g}; per seed: " + (
        ", ".join(f"{s}: {v if v is None else round(v, 3)}" for s, v in per_seed.items())
    )
    return check_spec(cid, spec, worst, _join(details, reason))


def _degradation(cid, spec, inputs):
    """Drop of the Jaccard from the least to the most noisy cell of the grid, per seed: its
    mean with a t interval over the seeds; a rise of the seed means by more than
    ``tolerance`` between neighbouring cells contradicts it; a cell with a missing seed or a
    failed run makes it not reproduced."""
    failed = _failed_rows(r for r in inputs.noise["rows"] if r["method"] == spec["method"])
    if failed:
        return check_spec(cid, spec, None, failed)
    cells = noise_cells(inputs.noise, spec["method"])
    missing = [
        f"({d:g}, {b:g}): {reason}"
        for (d, b), seeds in cells.items()
        if (reason := over_seeds(seeds, min)[1])
    ]
    if missing:
        return check_spec(cid, spec, None, "; ".join(missing))
    dels, bgs, grid = noise_grid(inputs.noise, spec["method"])
    tol = spec["tolerance"]
    rises = int((np.diff(grid, axis=0) > tol).sum() + (np.diff(grid, axis=1) > tol).sum())
    path = ", ".join(f"{d:g}: {v:.2f}" for d, v in zip(dels, grid[:, 0], strict=True))
    below = [
        f"({d:g}, {b:g})" for i, d in enumerate(dels) for j, b in enumerate(bgs) if grid[i, j] < 0.9
    ]
    details = (
        f"{spec['method']}, seed means; by deletion at background {bgs[0]:g}: {path}; by "
        f"background at deletion {dels[0]:g}: "
        + ", ".join(f"{b:g}: {v:.2f}" for b, v in zip(bgs, grid[0], strict=True))
        + f"; cells below 0.9: {', '.join(below) or 'none'}; rises > {tol:g}: {rises}"
    )
    least, most = cells[dels[0], bgs[0]], cells[dels[-1], bgs[-1]]
    drops = {s: v - most[s] if s in most else None for s, v in least.items()}
    claim = mean_claim(cid, spec, drops, details + "; drop least → most noise")
    if rises:
        return dataclasses.replace(claim, verdict=CONTRADICTED, details=f"not monotone: {details}")
    return claim


def _explorations(spec, inputs, describe) -> str:
    """``exploration, not the verdict: ...`` for the data sets in ``spec["explorations"]``."""
    found = []
    for dataset in spec.get("explorations", []):
        e = _lookup(inputs.metrics.get(dataset, {}), spec["method"])
        found.append(f"{dataset}: {describe(e)}" if e else f"{dataset}: not in this run")
    return f"exploration, not the verdict: {'; '.join(found)}" if found else ""


def _describe_cf(e) -> str:
    return (
        f"CF {e['cf']:.2f}, CF_bytes {e['cf_bytes']:.2f}, {e['rank']} factors, "
        f"nnz(R) {e['residual_nnz']} of nnz(A) {e['nnz']}"
    )


def _failed_entry(cid, spec, e):
    """Not reproduced when the decomposition read does not reproduce its graph."""
    where = f"{spec['dataset']}/{spec['method']}"
    reason = f"failed run: {where} misses {_not_exact(e)} cells of the graph (not exact)"
    return check_spec(cid, spec, None, reason)


def _compression(cid, spec, inputs):
    e = _entry(spec, inputs.metrics)
    if e is None:
        return not_tested(cid, spec["claim"], f"{spec['dataset']}/{spec['method']} not in this run")
    if _not_exact(e):
        return _failed_entry(cid, spec, e)
    details = f"{spec['dataset']}/{spec['method']}: {_describe_cf(e)}"
    return check_spec(cid, spec, e["cf"], _join(details, _explorations(spec, inputs, _describe_cf)))


def _cf_by_seed(study, setting, method) -> dict:
    """seed -> CF of one method in one setting; None for a failed run (not exact)."""
    return {
        r["seed"]: None if _not_exact(r) else r["cf"]
        for r in study["rows"]
        if r["setting"] == setting and r["method"] == method
    }


def _signed_vs_unsigned(cid, spec, inputs):
    """Paired CF difference (method − baseline) over the seeds of the claim's sign-study
    setting; every other setting (another cause) is reported beside it."""
    a, b = spec["method"], spec["baseline"]
    others = []
    for setting in dict.fromkeys(r["setting"] for r in inputs.sign["rows"]):
        if setting != spec["setting"]:
            diff = paired_difference(
                _cf_by_seed(inputs.sign, setting, a), _cf_by_seed(inputs.sign, setting, b)
            )
            others.append(f"{setting}: {diff.text()}")
    A, B = (
        _cf_by_seed(inputs.sign, spec["setting"], a),
        _cf_by_seed(inputs.sign, spec["setting"], b),
    )
    judged = [r for r in inputs.sign["rows"] if r["setting"] == spec["setting"]]
    details = _join(
        _failed_rows(r for r in judged if r["method"] in (a, b)),
        f"sign study, {spec['setting']}: CF {a} {_seeds(A)} vs {b} {_seeds(B)}; "
        f"the other settings (CF {a} − {b}): {'; '.join(others) or 'none'}",
    )
    return paired_claim(cid, spec, A, B, details)


def _seeds(values: dict) -> str:
    shown = (f"{s}: {'failed' if v is None else f'{v:.2f}'}" for s, v in values.items())
    return "{" + ", ".join(shown) + "}"


def _speedup(cid, spec, inputs):
    e = _entry(spec, inputs.metrics)
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
    if _not_exact(e):
        return _failed_entry(cid, spec, e)
    measured, text = _timing(spec, e)
    explored = _explorations(spec, inputs, lambda entry: _timing(spec, entry)[1])
    return check_spec(cid, spec, measured, _join(f"{spec['dataset']}, {text}", explored))


def _timing(spec, e) -> tuple[float, str]:
    """The measured number at the claim's d (the speedup of the fastest calls, or its fraction
    of CF), in words, with the ratio of the medians beside it."""
    backend = spec["backend"]
    base, ours = ("scipy_csr" if backend == "scipy" else "torch_csr"), f"sbd_{backend}"
    r = next(r for r in e["spmm"] if r["d"] == spec["d"])
    speedup = r[f"speedup_{backend}"]
    median = r[base]["median_ms"] / r[ours]["median_ms"]
    text = (
        f"d={spec['d']}, {r['device']}: {base} {r[base]['min_ms']:.3f} ms vs SBD "
        f"{r[ours]['min_ms']:.3f} ms (fastest of interleaved calls), speedup {speedup:.2f}, "
        f"CF {e['cf']:.2f}, speedup/CF {speedup / e['cf']:.2f}; medians "
        f"{r[base]['median_ms']:.3f} vs {r[ours]['median_ms']:.3f} ms: speedup {median:.2f}, "
        f"/CF {median / e['cf']:.2f}"
    )
    return (speedup / e["cf"] if spec.get("measure") == "fraction_of_cf" else speedup), text


def _bound(cid, spec, inputs):
    """Largest speedup / CF over the claim's backend (all when unset); the other backend's
    largest ratio is reported in the details either way."""
    entries = list(checks.entries(inputs.metrics))
    failed = [f"{d}/{m} misses {_not_exact(e)} cells" for d, m, e in entries if _not_exact(e)]
    if failed:
        return check_spec(cid, spec, None, "failed runs (not exact): " + "; ".join(failed))
    ratios = {
        f"{d}/{m}/d={r['d']}/{k}": r[f"speedup_{k}"] / e["cf"]
        for d, m, e in entries
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
    return check_worst(cid, spec, chosen, max, details)


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


# The kinds of papers.sbd.claims and papers.sbd.checks, each handler(id, spec, Inputs).
KINDS = {
    "exact_reconstruction": checks.exact_reconstruction,
    "greedy_descent": checks.greedy_descent,
    "spmm_error": checks.spmm_error,
    "planted_recovery": _recovery,
    "recovery_degradation": _degradation,
    "compression": _compression,
    "signed_vs_unsigned": _signed_vs_unsigned,
    "spmm_speedup": _speedup,
    "speedup_bound": _bound,
}


def _rows(paths) -> dict:
    """One study document from its per-method parts."""
    return {"rows": [row for path in paths for row in read_json(path)["rows"]]}


def check_claims(
    specs: dict, checks: dict, metrics_paths: dict, noise_paths, sign_paths, output
) -> list[Claim]:
    """Judge the claims, then the checks, on a run's metrics and studies (each study as
    its per-method files; the noise study's oracles are one more file); write them to
    ``output``."""
    inputs = Inputs(
        metrics={name: read_json(path) for name, path in metrics_paths.items()},
        noise=_rows(noise_paths),
        sign=_rows(sign_paths),
    )
    claims = run_claims(specs, KINDS, inputs, checks)
    write_json(output, claims)
    return claims


def main(argv: list[str] | None = None) -> None:
    from repro.common.cli import log_to_stderr, paper_section, step_parser

    p = step_parser("Judge SBD's claims and checks on a run's metrics.", paper="sbd")
    p.add_argument("--results", default="results/sbd", help="the run's results/sbd folder")
    p.add_argument("--output", default="claims.json")
    a = p.parse_args(argv)
    log_to_stderr()
    sbd, metrics = paper_section(a.config, "sbd"), Path(a.results) / "metrics"

    def study(name):
        return [metrics / name / f"{m}.json" for m in sbd.get(name, {}).get("methods", [])]

    check_claims(
        sbd["claims"],
        sbd.get("checks", {}),
        {d: metrics / f"{d}.json" for d in sbd["datasets"]},
        [*study("noise_study"), metrics / "noise_study" / "oracles.json"],
        study("sign_study"),
        a.output,
    )


if __name__ == "__main__":
    main()
