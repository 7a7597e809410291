"""Evaluate adapted models on every test domain: reconstruction metrics and, per
cross-attention layer, the collapse diagnostics of view-2 queries over view-1 keys.

For 3R-lite methods the rewired relation (candidate weights spread onto the key grid) gets
the same diagnostics. One scene's attention rows and point cloud (seed 0) are kept for the
figures, and its reconstruction is exported as a .ply.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import torch

from repro.common.io import read_npz, write_json
from repro.common.provenance import RunRecorder
from repro.common.summary import mean_std
from repro.r3_adapter.attention import captured, diagnostics
from repro.r3_adapter.data import Observed, domains, split_from_arrays
from repro.r3_adapter.export import write_point_cloud
from repro.r3_adapter.methods import DUST3R_TARGETS, Adapted, Targets
from repro.r3_adapter.metrics import aligned_points, reconstruction_metrics
from repro.r3_adapter.model import ModelConfig
from repro.r3_adapter.reference import consensus_accuracy
from repro.r3_adapter.relational import splat
from repro.r3_adapter.train import fresh_adapted, job_setup

log = logging.getLogger(__name__)


def _view2_rows(probabilities: torch.Tensor, batch: int) -> torch.Tensor:
    """Both views are stacked on the batch: rows batch.. are view 2 attending to view 1."""
    return probabilities[batch:].mean(dim=1)


@torch.no_grad()
def evaluate_domain(
    adapted: Adapted,
    data: Observed,
    targets: Targets = DUST3R_TARGETS,
    chunk: int = 256,
) -> tuple[dict, dict]:
    """Metrics and per-layer diagnostics on one domain; plus raw rows of scene 0."""
    outs, layers, rewired, example = [], {}, {}, {}
    relational = adapted.hooks["relational"] if "relational" in adapted.hooks else None
    for start in range(0, len(data), chunk):
        part = data.subset(slice(start, start + chunk))
        with captured(adapted.model, targets.cross_attention) as probs:
            outs.append(adapted.model(*part.inputs()))
        for name, p in probs.items():
            layers.setdefault(name, []).append(_view2_rows(p, len(part)))
        if relational is not None:
            for name, adapter in relational.adapters.items():
                grid = relational.grid
                spread = splat(adapter.last_weights, adapter.last_positions, grid)
                rewired.setdefault(name, []).append(spread[len(part) :])
    out = {k: torch.cat([o[k] for o in outs]) for k in outs[0]}
    metrics = reconstruction_metrics(out, data)
    match = data.scenes.match
    grid = int(round(match.shape[1] ** 0.5))
    metrics["nc_accuracy"] = consensus_accuracy(data.obs1, data.obs2, match, grid)
    metrics["layers"] = [diagnostics(torch.cat(v), match) for v in layers.values()]
    example["attention"] = [torch.cat(v)[0] for v in layers.values()]
    if rewired:
        metrics["rewired"] = [diagnostics(torch.cat(v), match) for v in rewired.values()]
        example["rewired"] = [torch.cat(v)[0] for v in rewired.values()]
    example["points"] = out["points"][0]
    example["aligned_points"] = aligned_points(out["points"][:1], data.subset(slice(0, 1)))[0]
    return metrics, example


def evaluate(adapted: Adapted, tests: dict[str, Observed], targets: Targets = DUST3R_TARGETS):
    """Per domain: metrics (with per-layer diagnostics) and the scene-0 example."""
    metrics, examples = {}, {}
    for domain, data in tests.items():
        metrics[domain], examples[domain] = evaluate_domain(adapted, data, targets)
        log.info(
            "%s: accuracy %.4f, EPE %.4f, AbsRel %.4f",
            domain,
            metrics[domain]["accuracy"],
            metrics[domain]["epe"],
            metrics[domain]["absrel"],
        )
    return metrics, examples


def flatten(metrics: dict) -> dict[str, float]:
    """{domain: {metric, layers: [...], rewired: [...]}} -> {"domain/metric": value, ...}."""
    flat = {}
    for domain, values in metrics.items():
        for key, value in values.items():
            if isinstance(value, list):
                prefix = "layer" if key == "layers" else key
                for i, layer in enumerate(value):
                    flat |= {f"{domain}/{prefix}{i}/{k}": v for k, v in layer.items()}
            else:
                flat[f"{domain}/{key}"] = value
    return flat


def evaluate_method(
    name: str,
    spec: dict,
    model_cfg: ModelConfig,
    seeds: Sequence[int],
    data_paths: Sequence[str],
    backbone_path: str,
    states_path: str,
    metrics_path: str,
    ply_path: str,
    *,
    grid: tuple[int, int],
    ply_domain: str,
    device: str = "auto",
    threads: int = 1,
) -> None:
    """Every seed's adapted model on every test domain; the mean and sd over seeds."""
    dev, backbone = job_setup(backbone_path, device, threads)
    states = torch.load(states_path, map_location=dev, weights_only=True)
    per_seed, example, n_trainable = [], None, None
    with RunRecorder(
        config={"method": name, "spec": spec, "seeds": list(seeds)}, device=dev
    ) as rec:
        for seed, path in zip(seeds, data_paths, strict=True):
            arrays = read_npz(path)
            tests = {d: split_from_arrays(arrays, f"test/{d}").to(dev) for d in domains(arrays)}
            adapted = fresh_adapted(model_cfg, backbone, spec, grid, dev)
            adapted.load_trainable_state(states[seed])
            n_trainable = adapted.n_trainable()
            metrics, examples = evaluate(adapted, tests)
            per_seed.append({"seed": seed, **flatten(metrics)})
            if example is None:
                example = _example(examples, tests)
                scene = tests[ply_domain].scenes
                write_point_cloud(
                    ply_path,
                    scene.xyz1[0].cpu().numpy(),
                    examples[ply_domain]["points"].cpu().numpy(),
                    scene.points2[0].cpu().numpy(),
                    scene.covisible[0].cpu().numpy(),
                )
    mean, std = mean_std([{k: v for k, v in row.items() if k != "seed"} for row in per_seed])
    write_json(
        metrics_path,
        {
            "method": name,
            "spec": spec,
            "n_trainable": n_trainable,
            "seeds": list(seeds),
            "per_seed": per_seed,
            "mean": mean,
            "std": std,
            "example": example,
            "provenance": rec.provenance(),
        },
    )


def _example(examples: dict, tests: dict[str, Observed]) -> dict:
    """Scene 0 of the first seed: truth and, per domain, attention rows and points."""
    scene = next(iter(tests.values())).scenes
    truth = {
        "xyz1": scene.xyz1[0],
        "points2": scene.points2[0],
        "match": scene.match[0],
        "grid": int(round(scene.xyz1.shape[1] ** 0.5)),
    }
    return {"truth": truth, "domains": examples}


def main(argv: list[str] | None = None) -> None:
    from repro.common.cli import paper_section, step_parser
    from repro.r3_adapter.names import domain_name
    from repro.r3_adapter.steps import scene_and_model

    p = step_parser(
        "Evaluate one adapted method on every seed and test domain.", paper="r3_adapter"
    )
    p.add_argument("--device", default="auto", help="auto | cpu | cuda")
    p.add_argument("method", help="a name under papers.r3_adapter.methods")
    p.add_argument("backbone", help="the pretrained state dict (.pt)")
    p.add_argument("states", help="the method's trainable states per seed (.pt)")
    p.add_argument("metrics", help="output: metrics JSON")
    p.add_argument("ply", help="output: seed 0's reconstruction of test scene 0 (.ply)")
    p.add_argument("data", nargs="+", help="results/r3_adapter/data/seed<s>.npz, seed order")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    sec = paper_section(args.config, "r3_adapter")
    _, model_cfg, grid = scene_and_model(sec)
    evaluate_method(
        args.method,
        sec["methods"][args.method],
        model_cfg,
        sec["seeds"],
        args.data,
        args.backbone,
        args.states,
        args.metrics,
        args.ply,
        grid=grid,
        ply_domain=domain_name(sec.get("splits", {}).get("adapt_severity", 2)),
        device=args.device,
    )


if __name__ == "__main__":
    main()
