"""Few-shot adaptation with a learning-rate search.

Every method gets the same few-shot set, steps, batch, optimiser and learning-rate grid;
the rate is chosen by correspondence accuracy on a shifted validation set that is disjoint
from the test scenes (ties: the smaller rate). While the best rate is the lowest (highest)
one tried, the grid is widened by one grid step on that side, at most ``widen`` times per
side, so that no method is judged at a rate the grid cut off; the record says whether the
chosen rate still sits on an edge.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence

import torch

from repro.common.device import select_device
from repro.common.io import read_npz, write_json
from repro.common.provenance import RunRecorder
from repro.common.seeding import seed_everything, set_threads
from repro.r3_adapter.data import Observed, split_from_arrays
from repro.r3_adapter.losses import task_loss
from repro.r3_adapter.methods import Adapted, backbone_change, build_method
from repro.r3_adapter.metrics import correspondence_accuracy
from repro.r3_adapter.model import ModelConfig, TwoViewTransformer
from repro.r3_adapter.sites import CrossAttentionSite

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class AdaptConfig:
    steps: int = 100
    batch_size: int = 32
    lrs: tuple[float, ...] = (1e-3, 3e-3, 1e-2)  # the same grid for every method
    widen: int = 3  # extra rates per side while the best rate is on that edge

    def __post_init__(self):
        object.__setattr__(self, "lrs", tuple(float(lr) for lr in self.lrs))


def adapt(adapted: Adapted, data: Observed, cfg: AdaptConfig, lr: float, seed: int) -> list[float]:
    """AdamW with cosine decay over ``cfg.steps`` minibatches of the few-shot set."""
    params = adapted.trainable()
    if not params:
        return []
    generator = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(params, lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    adapted.model.train()
    losses = []
    for _ in range(cfg.steps):
        index = torch.randperm(len(data), generator=generator)[: cfg.batch_size]
        batch = data.subset(index)
        loss = task_loss(adapted.model(*batch.inputs()), batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    adapted.model.eval()
    return losses


@torch.no_grad()
def validation_accuracy(adapted: Adapted, data: Observed) -> float:
    return correspondence_accuracy(adapted.model(*data.inputs())["match"], data)


def _next_rate(tried: Sequence[float], best: float, grid: Sequence[float], widened: dict):
    """The rate one grid step beyond the edge the best rate sits on, or None."""
    if len(grid) < 2:
        return None
    low, high = min(tried), max(tried)
    if best == low and widened["low"] > 0:
        widened["low"] -= 1
        return low * grid[0] / grid[1]
    if best == high and widened["high"] > 0:
        widened["high"] -= 1
        return high * grid[-1] / grid[-2]
    return None


def search_lr(
    build: Callable[[], Adapted],
    fewshot: Observed,
    validation: Observed,
    cfg: AdaptConfig,
    seed: int,
    lrs: Sequence[float] | None = None,
) -> tuple[Adapted, dict]:
    """Adapt a fresh copy per rate; keep the best on validation accuracy. With the config's
    grid (``lrs`` None) the grid is widened past an edge that holds the best rate."""
    grid = sorted(lrs or cfg.lrs)
    widened = {"low": cfg.widen if lrs is None else 0, "high": cfg.widen if lrs is None else 0}
    best, record = None, {"validation_accuracy": {}, "losses": {}}
    queue = list(grid)
    while queue:
        lr = queue.pop(0)
        torch.manual_seed(seed)  # the same adapter initialisation at every rate
        adapted = build()
        losses = adapt(adapted, fewshot, cfg, lr, seed)
        accuracy = validation_accuracy(adapted, validation)
        record["validation_accuracy"][lr], record["losses"][lr] = accuracy, losses
        log.info("lr %.0e: validation accuracy %.4f", lr, accuracy)
        better = best is None or accuracy > best[0] or (accuracy == best[0] and lr < best[1])
        if better:
            if best is not None:
                best[2].remove()
            best = (accuracy, lr, adapted)
        else:
            adapted.remove()
        if not adapted.trainable():
            break  # nothing trains: every rate gives the same model
        if not queue:
            extra = _next_rate(list(record["validation_accuracy"]), best[1], grid, widened)
            queue += [extra] if extra is not None else []
    tried = list(record["validation_accuracy"])
    record["lr"], record["n_trainable"] = best[1], best[2].n_trainable()
    record["lr_on_edge"] = len(tried) > 1 and best[1] in (min(tried), max(tried))
    return best[2], record


def job_setup(backbone_path: str, device: str, threads: int) -> tuple[torch.device, dict]:
    """One job's threads and device, and the pretrained backbone's weights."""
    set_threads(threads)
    dev = select_device(device)
    return dev, torch.load(backbone_path, map_location=dev, weights_only=True)


def fresh_adapted(
    model_cfg: ModelConfig, backbone_state: dict, spec: dict, grid, device
) -> Adapted:
    """The pretrained backbone with the method's adapters attached (identity at step 0)."""
    model = TwoViewTransformer(model_cfg).to(device)
    model.load_state_dict(backbone_state)
    return build_method(model.eval(), spec, site=CrossAttentionSite(grid))


def train_method(
    name: str,
    spec: dict,
    model_cfg: ModelConfig,
    adapt_cfg: AdaptConfig,
    seeds: Sequence[int],
    data_paths: Sequence[str],
    backbone_path: str,
    states_path: str,
    record_path: str,
    *,
    grid: tuple[int, int],
    device: str = "auto",
    threads: int = 1,
) -> None:
    """Search the rate on the first seed's validation set, then adapt every seed at it."""
    dev, backbone = job_setup(backbone_path, device, threads)
    states, runs, gap = {}, [], None
    config = {"method": name, "spec": spec, "adapt": adapt_cfg, "seeds": list(seeds)}
    with RunRecorder(config=config, device=dev) as rec:
        lrs = None
        for seed, path in zip(seeds, data_paths, strict=True):
            seed_everything(seed)
            arrays = read_npz(path)
            fewshot = split_from_arrays(arrays, "fewshot").to(dev)
            validation = split_from_arrays(arrays, "validation").to(dev)

            def build():
                return fresh_adapted(model_cfg, backbone, spec, grid, dev)

            if gap is None:
                gap = identity_gap(build(), model_cfg, backbone, validation)
            adapted, record = search_lr(build, fewshot, validation, adapt_cfg, seed, lrs)
            record["backbone_change"] = backbone_change(adapted.model, backbone)
            lrs = [record["lr"]]  # chosen once, on the first seed
            log.info(
                "%s seed %d: lr %.0e, %d trainable",
                name,
                seed,
                lrs[0],
                adapted.n_trainable(),
            )
            states[seed] = adapted.trainable_state()
            runs.append({"seed": seed, **record})
    torch.save(states, states_path)
    summary = {"method": name, "spec": spec, "identity_gap": gap, "runs": runs}
    write_json(record_path, summary | rec.provenance())


@torch.no_grad()
def identity_gap(adapted: Adapted, model_cfg: ModelConfig, backbone: dict, data: Observed):
    """Largest |output change| of the freshly attached method against the frozen model."""
    frozen = TwoViewTransformer(model_cfg).to(data.obs1.device)
    frozen.load_state_dict(backbone)
    want, got = frozen.eval()(*data.inputs()), adapted.model(*data.inputs())
    adapted.remove()
    return max((want[k] - got[k]).abs().max().item() for k in want)


def main(argv: list[str] | None = None) -> None:
    from repro.common.cli import paper_section, step_parser
    from repro.r3_adapter.steps import scene_and_model

    p = step_parser(
        "Adapt one method on every seed's few-shot set (rate searched on the first seed).",
        paper="r3_adapter",
    )
    p.add_argument("--device", default="auto", help="auto | cpu | cuda")
    p.add_argument("method", help="a name under papers.r3_adapter.methods")
    p.add_argument("backbone", help="the pretrained state dict (.pt)")
    p.add_argument("states", help="output: trainable states per seed (.pt)")
    p.add_argument("record", help="output: the training record (.json)")
    p.add_argument("data", nargs="+", help="results/r3_adapter/data/seed<s>.npz, seed order")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    sec = paper_section(args.config, "r3_adapter")
    _, model_cfg, grid = scene_and_model(sec)
    train_method(
        args.method,
        sec["methods"][args.method],
        model_cfg,
        AdaptConfig(**sec.get("adaptation", {})),
        sec["seeds"],
        args.data,
        args.backbone,
        args.states,
        args.record,
        grid=grid,
        device=args.device,
    )


if __name__ == "__main__":
    main()
