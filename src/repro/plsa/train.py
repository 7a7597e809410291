"""End-to-end GNN domain adaptation on a (source, target) graph pair (Pair-Align's protocol).

Full-batch training on the labelled source graph; every ``refresh_every`` epochs the current
model's outputs go to ``reweight.estimate`` (the methods are described there), and its
per-cell weights become per-source-edge weights (1 − mix) + mix·W[y_u, y_v] (true source
labels) on the source graph's messages and, for the "BOTH" variants, class weights β_y on
the source cross-entropy. The source graph's forward pass always uses the current edge
weights (training, validation, calibration, the source moments of ``pa``), as in
Pair-Align; the target graph is never reweighted.

Accuracies count only the nodes of a graph's ``eval_mask`` (MAG: all but the merged class,
as Pair-Align's ``get_acc_score`` does); training uses every node.

Decisions (measured on the gss CSBM, n = 3000, 3 seeds):
* β comes from BBSE (Pair-Align's node-level QP) by default, the same for every method. MLLS
  (``label_estimator="mlls"``) fed back into training is unstable: in 17 of 18 StruRW/PA/PLSA
  runs (σ = 0.55 and 0.8) a β_y reached 0, class y stopped being trained, and accuracy fell.
* Model selection only considers epochs after the first re-estimation, for every method and
  both protocols: source-validation accuracy on the unweighted (more homophilous, easier)
  source graph is not comparable with accuracy on the reweighted one, and otherwise
  pre-adaptation states win.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import time

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.linear_model import LogisticRegression

from repro.common.device import select_device
from repro.common.seeding import seed_everything, set_threads
from repro.plsa import estimators
from repro.plsa.csbm import Graph, pair_distribution
from repro.plsa.gnn import WeightedSAGE
from repro.plsa.reweight import METHODS, Context, edge_pair_weights, estimate
from repro.plsa.runs_summary import ECE_KEYS

log = logging.getLogger(__name__)

SELECTIONS = ("source", "target")
_FIELDS = (("x", torch.float32), ("edge_index", torch.long), ("y", torch.long))


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    method: str  # a key of reweight.METHODS
    epochs: int = 150
    lr: float = 3e-3
    hidden: int = 32
    layers: int = 2
    dropout: float = 0.5
    refresh_every: int = 10  # re-estimate every this many epochs, the first time at this epoch
    lam_w: float = 0.0  # Pair-Align's ridge toward w = 1 (pa, pa_features)
    official_lam_w: float = 1.0  # the ridge of pa_official (Pair-Align's ls_lambda)
    label_weights: bool = True  # "BOTH" variants: β_y on the source loss (not erm, strurw)
    mix: float = 1.0  # message mixing (1 − mix)·m + mix·γ·m
    strurw_mix: float = 0.5  # StruRW's own mixing λ (rw_lmda)
    pair_epochs: int = 50  # plsa_pair: Adam steps per fit of the pair classifier
    pair_lr: float = 0.01  # (see pair_classifier.PairClassifierConfig)
    label_estimator: str = "bbse"  # bbse (Pair-Align's QP, ridge 0.005) | mlls (brief §2.3)
    selection: str = "source"  # source-validation labels, or "target": 20% of target labels
    val_fraction: float = 0.2  # of source nodes (validation) and of target nodes (target-val)
    device: str = "auto"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {tuple(METHODS)}, got {self.method!r}")
        if self.label_estimator not in ("mlls", "bbse"):
            raise ValueError(f"label_estimator must be mlls or bbse, got {self.label_estimator!r}")
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {self.selection!r}")
        if self.refresh_every < 1 or not 0.0 < self.val_fraction < 1.0:
            raise ValueError("refresh_every must be >= 1 and val_fraction in (0, 1)")


def split_nodes(n: int, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """(rest, held-out) node indices; the held-out part is ``round(fraction·n)`` nodes."""
    order = rng.permutation(n)
    held = int(round(fraction * n))
    if held == 0 or held == n:
        raise ValueError(f"a {fraction} split of {n} nodes leaves one part empty")
    return np.sort(order[held:]), np.sort(order[:held])


# The logit of a class no source training node has, below the row's least likely seen class:
# a millionth of its probability (finite, so calibration and EM stay finite).
UNSEEN_CLASS_GAP = float(np.log(1e6))


def feature_logits(source: Graph, target: Graph, train_s: np.ndarray):
    """Logits of a logistic regression on node features alone (fit on source training nodes),
    one column per class of the source graph: sklearn's columns are the classes it saw, so a
    rare class whose nodes all fell outside ``train_s`` gets its column here, set
    ``UNSEEN_CLASS_GAP`` below the row's smallest logit."""
    k = source.num_classes
    model = LogisticRegression(max_iter=1000).fit(source.x[train_s], source.y[train_s])
    seen = model.classes_.astype(np.int64)

    def full(x: np.ndarray) -> np.ndarray:
        z = model.decision_function(x).astype(np.float64)
        if len(seen) == 2:  # sklearn's binary case: one column, the second class's logit
            z = np.stack([np.zeros_like(z), z], axis=1)
        out = np.repeat(z.min(axis=1, keepdims=True) - UNSEEN_CLASS_GAP, k, axis=1)
        out[:, seen] = z
        return out

    return full(source.x), full(target.x)


def _evaluated(nodes: np.ndarray, graph: Graph) -> np.ndarray:
    """The nodes among ``nodes`` whose accuracy counts (all, without an eval_mask)."""
    return nodes if graph.eval_mask is None else nodes[np.asarray(graph.eval_mask)[nodes]]


def _accuracy(logits: torch.Tensor, y: torch.Tensor) -> float:
    return float((logits.argmax(1) == y).float().mean()) if len(y) else float("nan")


def _majority_share(y: torch.Tensor) -> float:
    """The accuracy of the best constant predictor: the majority class's share of ``y``."""
    return float(torch.bincount(y).max() / len(y)) if len(y) else float("nan")


def weighted_cross_entropy(
    logits: torch.Tensor, labels: torch.Tensor, beta: torch.Tensor
) -> torch.Tensor:
    """The source loss: (1/n) Σ_i β_{y_i} CE(logits_i, y_i); β = 1 until an estimate gives
    the class weights of the "BOTH" variants."""
    return (beta[labels] * F.cross_entropy(logits, labels, reduction="none")).mean()


def run(cfg: TrainConfig, source: Graph, target: Graph, *, checkpoint: str | None = None) -> dict:
    """Train on ``source``, evaluate on ``target``; return accuracies, estimates and timing.

    The selected state (best validation accuracy under ``cfg.selection``) is what the
    reported accuracies belong to; ``checkpoint`` saves its state dict with ``torch.save``.
    """
    started = time.perf_counter()
    rng = seed_everything(cfg.seed)
    device = select_device(cfg.device)
    k = source.num_classes
    train_s, val_s = split_nodes(len(source.y), cfg.val_fraction, rng)
    test_t, val_t = split_nodes(len(target.y), cfg.val_fraction, rng)
    truth = {
        "pi_s": pair_distribution(source.edge_index, source.y, k),
        "pi_t": pair_distribution(target.edge_index, target.y, k),
        "prior_s": np.bincount(source.y, minlength=k) / len(source.y),
        "prior_t": np.bincount(target.y, minlength=k) / len(target.y),
    }
    method = METHODS[cfg.method]
    ctx = Context(
        source,
        target,
        train_s,
        val_s,
        val_t,
        truth,
        feature_logits(source, target, train_s) if method.features else None,
    )

    def tensor(a, dtype):
        return torch.as_tensor(np.asarray(a), dtype=dtype, device=device)

    x_s, ei_s, y_s = (tensor(getattr(source, f), t) for f, t in _FIELDS)
    x_t, ei_t, y_t = (tensor(getattr(target, f), t) for f, t in _FIELDS)
    train_idx = tensor(train_s, torch.long)
    scored = {  # the nodes whose accuracy counts (eval_mask)
        "source_val": _evaluated(val_s, source),
        "target_val": _evaluated(val_t, target),
        "target_test": _evaluated(test_t, target),
    }
    scored = {name: tensor(a, torch.long) for name, a in scored.items()}

    model = WeightedSAGE(
        in_features=source.x.shape[1],
        num_classes=k,
        hidden=cfg.hidden,
        layers=cfg.layers,
        dropout=cfg.dropout,
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    edge_weight: torch.Tensor | None = None
    beta = torch.ones(k, device=device)
    current = None  # the latest reweight.Estimate
    mix = cfg.strurw_mix if method.estimator == "strurw" else cfg.mix
    curves: dict[str, list[float]] = {"source_val": [], "target_val": [], "target_test": []}
    estimates: list[dict] = []
    best = (-1.0, 0, None)  # (selection score, epoch, state)
    first_candidate = min(cfg.refresh_every + 1, cfg.epochs)  # see the module docstring

    for epoch in range(1, cfg.epochs + 1):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        logits = model(x_s, ei_s, edge_weight)[train_idx]
        labels = y_s[train_idx]
        loss = weighted_cross_entropy(logits, labels, beta)
        loss.backward()
        optimizer.step()

        model.eval()
        with torch.no_grad():
            hidden = (model.hidden(x_s, ei_s, edge_weight), model.hidden(x_t, ei_t))
            logits_s, logits_t = model.head(hidden[0]), model.head(hidden[1])
        accs = {
            name: _accuracy((logits_s if name == "source_val" else logits_t)[nodes], y[nodes])
            for name, nodes, y in (
                ("source_val", scored["source_val"], y_s),
                ("target_val", scored["target_val"], y_t),
                ("target_test", scored["target_test"], y_t),
            )
        }
        for name, value in accs.items():
            curves[name].append(value)
        score = accs[f"{cfg.selection}_val"]
        if epoch >= first_candidate and score > best[0]:  # ties keep the earlier epoch
            state = {n: v.detach().clone() for n, v in model.state_dict().items()}
            best = (score, epoch, state)

        if method.estimator is not None and epoch % cfg.refresh_every == 0:
            current = estimate(
                cfg,
                ctx,
                (logits_s.double().cpu().numpy(), logits_t.double().cpu().numpy()),
                np.ones(k) if current is None else current.beta,
                hidden if method.estimator == "plsa_pair" else None,
            )
            weights = edge_pair_weights(current.cell_weights, source.y, source.edge_index, mix=mix)
            edge_weight = tensor(weights, torch.float32)
            beta = tensor(current.beta, torch.float32)
            error = estimators.l1_error(current.pi_hat, truth["pi_t"])
            estimates.append(
                {"epoch": epoch, "l1_error": float(error), "beta": current.beta, **current.info}
            )
        if epoch % 50 == 0 or epoch == cfg.epochs:
            log.info(
                "%s seed %d epoch %d: loss %.4f, source val %.3f, target test %.3f%s",
                cfg.method,
                cfg.seed,
                epoch,
                float(loss.detach()),
                accs["source_val"],
                accs["target_test"],
                f", pi L1 {estimates[-1]['l1_error']:.4f}" if estimates else "",
            )

    best_epoch = best[1]
    if best[2] is None:  # every validation accuracy was NaN, or too few epochs to select
        raise RuntimeError(f"{cfg.method}: no epoch after {first_candidate - 1} could be selected")
    if checkpoint is not None:
        torch.save(best[2], checkpoint)
    last = estimates[-1] if estimates else {}
    return {
        "method": cfg.method,
        "selection": cfg.selection,
        "seed": cfg.seed,
        "label_weights": cfg.label_weights and method.label_weights,
        "target_accuracy": curves["target_test"][best_epoch - 1],
        "target_val_accuracy": curves["target_val"][best_epoch - 1],
        "source_val_accuracy": curves["source_val"][best_epoch - 1],
        "best_epoch": best_epoch,
        "pi_l1_error": last.get("l1_error"),
        **{key: last.get(key) for key in ECE_KEYS},
        "pi_hat": None if current is None else current.pi_hat,
        "pi_target": truth["pi_t"],
        "gamma": None if current is None else current.cell_weights,
        "beta": None if current is None else current.beta,
        "estimates": estimates,
        "curves": curves,
        "n_target_test": int(scored["target_test"].numel()),
        "constant_accuracy": _majority_share(y_t[scored["target_test"]]),
        "device": str(device),
        "train_seconds": time.perf_counter() - started,
        "config": dataclasses.asdict(cfg),
    }


def main(argv: list[str] | None = None) -> int:
    """Debugging entry point: one method on one freshly sampled CSBM pair, result as JSON."""
    from repro.common.cli import log_to_stderr
    from repro.common.io import to_jsonable
    from repro.plsa.csbm import sample_csbm, shift_setting

    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("--method", choices=tuple(METHODS), required=True)
    p.add_argument("--shift", default="gss", help="none | css | degree | gss")
    p.add_argument("--n", type=int, default=3000)
    p.add_argument("--sigma", type=float, default=0.55)
    p.add_argument("--seed", type=int, default=0, help="graph draw and training seed")
    p.add_argument("--epochs", type=int, default=150)
    p.add_argument("--selection", choices=SELECTIONS, default="source")
    p.add_argument("--label-estimator", choices=("bbse", "mlls"), default="bbse")
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)
    log_to_stderr()
    set_threads(1)
    rng = np.random.default_rng(args.seed)  # the same draw order as prepare.prepare_csbm
    specs = shift_setting(args.shift, n=args.n, sigma=args.sigma)
    source, target = (sample_csbm(spec, rng=rng) for spec in specs)
    cfg = TrainConfig(
        method=args.method,
        epochs=args.epochs,
        selection=args.selection,
        label_estimator=args.label_estimator,
        device=args.device,
        seed=args.seed,
    )
    result = run(cfg, source, target)
    result.pop("curves")
    print(json.dumps(to_jsonable(result), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
