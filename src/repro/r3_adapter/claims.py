"""3R-Adapter's claims and checks, judged on the per-method metrics and training records.

``KINDS`` maps each kind of the config to ``handler(id, spec, inputs)`` with ``inputs =
{"metrics": {method: metrics document}, "runs": {method: training record}, "full":
{"backbone/data set": {method: summary}}, "sanity": papers.r3_adapter.sanity}``; an entry with
``backbone`` and ``dataset`` reads the full-scale summaries. Metric names are the flat keys of
the metrics documents: ``<domain>/<accuracy|epe|absrel>`` and
``<domain>/layer<i>/<gt_mass|entropy|precision>``. A paired criterion's margin ``delta`` is
written in the config beside the claim.

A seed whose adaptation did not train (a loss that is not finite, or whose last tenth does
not fall below ``sanity.loss_ratio`` × its loss at step 0, where every adapter but the ungated
one is still the frozen model) is a failed run: the
paired claims that read it are not reproduced, naming it, and the ``adaptation_sanity`` check
fails.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from repro.common.claims import (
    CONTRADICTED,
    REPRODUCED,
    Claim,
    all_hold,
    check_spec,
    check_worst,
    mean_claim,
    over_seeds,
    paired_claim,
    run_claims,
)
from repro.common.io import read_json, write_json
from repro.r3_adapter.names import domain_name, expects_identity


def _docs(spec: Mapping, inputs: Mapping) -> Mapping:
    """Metrics documents by method: the embedded run's, or a full-scale backbone's on a data
    set (entries with ``backbone`` and ``dataset``)."""
    if not spec.get("dataset"):
        return inputs["metrics"]
    return inputs["full"][f"{spec['backbone']}/{spec['dataset']}"]


def per_seed(document: Mapping, metric: str) -> dict[int, float]:
    return {int(row["seed"]): row.get(metric) for row in document["per_seed"]}


def _chosen_losses(run: Mapping) -> list[float]:
    """The adaptation losses of one seed's run at the rate it kept (JSON keys are text)."""
    return next((v for k, v in run["losses"].items() if float(k) == run["lr"]), [])


def run_failure(run: Mapping, loss_ratio: float) -> str:
    """Why one seed's adaptation is a failed run, or "" (nothing trained: nothing to fail)."""
    losses = np.asarray(_chosen_losses(run), dtype=float)
    if not len(losses):
        return ""
    if not np.all(np.isfinite(losses)):
        return "its adaptation loss is not finite"
    tail = losses[-max(1, len(losses) // 10) :].mean()
    if tail > loss_ratio * losses[0]:
        return (
            f"its adaptation loss did not fall: last tenth {tail:.4g} > {loss_ratio:g} x "
            f"{losses[0]:.4g} at step 0"
        )
    return ""


def failed_runs(inputs: Mapping) -> dict[str, dict[int, str]]:
    """method -> {seed: reason} of every failed run (see the module text)."""
    ratio = inputs.get("sanity", {}).get("loss_ratio")
    if ratio is None:
        return {}
    found = {}
    for method, record in inputs["runs"].items():
        for run in record["runs"]:
            if reason := run_failure(run, ratio):
                found.setdefault(method, {})[int(run["seed"])] = reason
    return found


def _sane_per_seed(document: Mapping, metric: str, failed: Mapping[int, str]) -> dict:
    """per_seed with a failed run's value missing (the claim is then not reproduced)."""
    return {s: None if s in failed else v for s, v in per_seed(document, metric).items()}


def _failures_text(methods, failed: Mapping) -> str:
    return "; ".join(
        f"failed run: {m} seed {s}: {reason}"
        for m in methods
        for s, reason in sorted(failed.get(m, {}).items())
    )


def precise_layer(document: Mapping) -> int:
    """The cross-attention layer with the highest clean-domain precision (mean over seeds)."""
    layers = sorted(
        int(k.split("/")[1][len("layer") :])
        for k in document["mean"]
        if k.startswith("clean/layer") and k.endswith("/precision")
    )
    return max(layers, key=lambda i: document["mean"][f"clean/layer{i}/precision"])


def domain_sequence(document: Mapping) -> list[str]:
    """clean, severity1, severity2, … as present in the document."""
    present = {k.split("/")[0] for k in document["mean"]}
    names, k = ["clean"], 1
    while domain_name(k) in present:
        names.append(domain_name(k))
        k += 1
    return names


def _ratios(doc: Mapping, metric: str, shifted: str) -> dict:
    """seed -> shifted / clean ``metric`` (None where a value is missing)."""
    clean, dark = per_seed(doc, f"clean/{metric}"), per_seed(doc, f"{shifted}/{metric}")
    return {s: None if dark[s] is None or not clean[s] else dark[s] / clean[s] for s in clean}


def collapse(claim_id, spec, inputs) -> Claim:
    """C1 on the relation: for each of ``measures`` (default: the match accuracy), the mean
    over seeds of shifted / clean, with a t interval over the seeds, meets the criterion —
    accuracies of the match head, ``gt_mass``/``precision`` of the most precise clean
    cross-attention layer — and in that layer GT-mass falls and pointmap EPE rises
    monotonically with severity. The measured number and interval are the least favourable
    measure's."""
    doc = inputs["metrics"][spec["method"]]
    shifted = domain_name(spec["severity"])
    layer = precise_layer(doc)
    names = domain_sequence(doc)
    mass = [doc["mean"][f"{d}/layer{layer}/gt_mass"] for d in names]
    epe = [doc["mean"][f"{d}/epe"] for d in names]
    falls = bool(np.all(np.diff(mass) < 0)) and bool(np.all(np.diff(epe) > 0))
    context = (
        f"layer {layer} (most precise clean) GT-mass {[round(m, 3) for m in mass]} and "
        f"EPE {[round(e, 3) for e in epe]} over {names}"
    )
    parts = []
    for measure in spec.get("measures", ["accuracy"]):
        metric = measure if "accuracy" in measure else f"layer{layer}/{measure}"
        ratios = _ratios(doc, metric, shifted)
        parts.append((metric, mean_claim(claim_id, spec, ratios, f"{shifted}/clean {metric}")))
    claim = all_hold(claim_id, parts)
    if all(c.measured is not None for _, c in parts):  # the least favourable measure
        pick = max if spec["criterion"]["op"].startswith("<") else min
        _, worst = pick(parts, key=lambda part: part[1].measured)
        claim = dataclasses.replace(claim, measured=worst.measured, interval=worst.interval)
    details = "; ".join(f"{c.details} ({c.verdict})" for _, c in parts) + f"; {context}"
    if claim.verdict == REPRODUCED and not falls:
        return dataclasses.replace(
            claim, verdict=CONTRADICTED, details=f"{details}; not monotone in severity"
        )
    return dataclasses.replace(claim, details=details)


def paired(claim_id, spec, inputs) -> Claim:
    """``method`` against every baseline on one metric, paired over seeds; held iff it holds
    against each (the measured number and interval are the least favourable comparison's).
    A failed run's seed has no value (not reproduced, the reason in the details)."""
    metrics, metric = _docs(spec, inputs), spec["metric"]
    failed = {} if spec.get("dataset") else failed_runs(inputs)
    ours = _sane_per_seed(metrics[spec["method"]], metric, failed.get(spec["method"], {}))
    parts = []
    for b in spec["baselines"]:
        theirs = _sane_per_seed(metrics[b], metric, failed.get(b, {}))
        why = _failures_text([spec["method"], b], failed)
        parts.append(
            (b, paired_claim(claim_id, spec, ours, theirs, "; ".join(filter(None, [why, metric]))))
        )
    merged = all_hold(claim_id, [(f"{spec['method']} − {b}", c) for b, c in parts])
    if len(parts) == 1:
        return dataclasses.replace(
            merged, details=f"{spec['method']} − {parts[0][0]}: {merged.details}"
        )
    return merged


def identity(claim_id, spec, inputs) -> Claim:
    """Check: the largest output change at step 0 over methods expected to start as identity."""
    gaps = {
        m: run["identity_gap"] for m, run in inputs["runs"].items() if expects_identity(run["spec"])
    }
    return check_spec(claim_id, spec, max(gaps.values()), f"per method {gaps}")


def budget(claim_id, spec, inputs) -> Claim:
    """Check: the relative trainable-parameter gap between method and each baseline."""
    docs = _docs(spec, inputs)
    ours = docs[spec["method"]]["n_trainable"]
    theirs = {b: docs[b]["n_trainable"] for b in spec["baselines"]}
    gap = max(abs(n - ours) / ours for n in theirs.values())
    return check_spec(claim_id, spec, gap, f"{spec['method']} {ours} vs {theirs}")


def frozen_backbone(claim_id, spec, inputs) -> Claim:
    """Check: no weight outside a method's trainable set moved during adaptation."""
    change = {
        m: over_seeds({r["seed"]: r["backbone_change"] for r in run["runs"]}, max)[0]
        for m, run in inputs["runs"].items()
    }
    return check_worst(claim_id, spec, change, max, f"largest change per method {change}")


def scalar(claim_id, spec, inputs) -> Claim:
    """One method's mean metric against a threshold (e.g. the pretrained clean accuracy)."""
    values = per_seed(inputs["metrics"][spec["method"]], spec["metric"])
    mean, reason = over_seeds(values, np.mean)
    return check_spec(
        claim_id, spec, mean, "; ".join(p for p in (f"per seed {values}", reason) if p)
    )


def adaptation_sanity(claim_id, spec, inputs) -> Claim:
    """Check: failed runs (a loss not finite, or not below its value at step 0) over every
    method and seed."""
    failed = failed_runs(inputs)
    runs = sum(len(r["runs"]) for r in inputs["runs"].values())
    text = _failures_text(sorted(failed), failed) or "none"
    return check_spec(
        claim_id, spec, sum(map(len, failed.values())), f"{runs} runs checked; {text}"
    )


def lr_interior(claim_id, spec, inputs) -> Claim:
    """Check: no method's chosen rate sits on an edge of the (widened) grid it searched."""
    edges = sorted(
        m for m, run in inputs["runs"].items() if any(r.get("lr_on_edge") for r in run["runs"])
    )
    return check_spec(claim_id, spec, len(edges), f"methods on an edge: {edges or 'none'}")


KINDS = {
    "adaptation_sanity": adaptation_sanity,
    "lr_interior": lr_interior,
    "collapse": collapse,
    "paired": paired,
    "identity": identity,
    "budget": budget,
    "frozen_backbone": frozen_backbone,
    "scalar": scalar,
}


def check_claims(
    claims: dict,
    checks: dict,
    metrics: dict,
    runs: dict,
    out: str,
    full: dict | None = None,
    sanity: dict | None = None,
) -> list[Claim]:
    """``full``: {"backbone/data set": {method: summary}} of the full-scale grid, if run;
    ``sanity``: papers.r3_adapter.sanity (what makes a seed's run a failed run)."""
    inputs = {"metrics": metrics, "runs": runs, "full": full or {}, "sanity": sanity or {}}
    results = run_claims(claims, KINDS, inputs, checks)
    write_json(out, results)
    return results


def main(argv: list[str] | None = None) -> None:
    from repro.common.cli import paper_section, step_parser

    p = step_parser("Judge 3R-Adapter's claims and checks.", paper="r3_adapter")
    p.add_argument("--metrics", nargs="+", required=True, help="metrics/<method>.json")
    p.add_argument("--runs", nargs="+", required=True, help="runs/<method>.json")
    p.add_argument("--full", nargs="*", default=[], help="full/metrics/<b>/<d>/<m>.json")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    section = paper_section(args.config, "r3_adapter")
    metrics = {d["method"]: d for d in map(read_json, args.metrics)}
    runs = {d["method"]: d for d in map(read_json, args.runs)}
    full = full_documents(map(read_json, args.full))
    check_claims(
        section.get("claims", {}),
        section.get("checks", {}),
        metrics,
        runs,
        args.out,
        full,
        section.get("sanity"),
    )


def full_documents(summaries) -> dict:
    """{"backbone/data set": {method: summary}} from full-scale summaries."""
    full: dict = {}
    for doc in summaries:
        full.setdefault(f"{doc['backbone']}/{doc['dataset']}", {})[doc["method"]] = doc
    return full


if __name__ == "__main__":
    main()
