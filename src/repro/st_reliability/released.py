"""State's released ST checkpoints (ST-HVG-Replogle, ST-SE-Replogle; brief §3 and §7).

A released model is a run directory as ``state tx train`` writes it and ``state tx infer``
(arc-state 0.11.1, ``state/_cli/_tx/_infer.py``) reads it: ``config.yaml``, ``var_dims.pkl``
(``pert_dim``, gene and batch dimensions), ``pert_onehot_map.pt`` (perturbation name → one-hot
row) and ``checkpoints/final.ckpt``, a Lightning checkpoint of
``StateTransitionPerturbationModel`` (``state_dict`` and the constructor's
``hyper_parameters``). The model class is State's own, so the audit's hooks apply unchanged.
"""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from repro.st_reliability.model import state_model_class

if TYPE_CHECKING:
    from state.tx.models.state_transition import StateTransitionPerturbationModel

FILES = ("config.yaml", "var_dims.pkl", "pert_onehot_map.pt", "checkpoints/final.ckpt")
# State's hyper_parameters keep its loss module (Lightning warns that ``loss_fn`` is saved),
# so a weights-only load must allow these classes; any other global fails loudly, named
SAFE_GLOBALS = (torch.nn.MSELoss,)


@dataclasses.dataclass
class Released:
    model: StateTransitionPerturbationModel
    vocabulary: list[str]  # perturbation names in one-hot order
    var_dims: dict


def load_released(run_dir: str | Path, *, device: str | torch.device = "cpu") -> Released:
    """The model of a released run directory, in eval mode, with its perturbation vocabulary.

    ``var_dims.pkl`` is a pickle (State writes it so); it is read only from a download whose
    sha256 is pinned. The checkpoint and the one-hot map are read with ``weights_only``.
    """
    run = Path(run_dir)
    missing = [f for f in FILES if not (run / f).exists()]
    if missing:
        raise FileNotFoundError(f"{run}: not a State run directory, missing {missing}")
    with open(run / "var_dims.pkl", "rb") as f:
        var_dims = pickle.load(f)  # noqa: S301 — State's own format, pinned download
    onehot = torch.load(run / "pert_onehot_map.pt", map_location="cpu", weights_only=True)
    vocabulary = sorted(onehot, key=lambda name: int(torch.argmax(onehot[name])))
    if len(vocabulary) != var_dims["pert_dim"]:
        raise ValueError(
            f"{run}: {len(vocabulary)} perturbations in the one-hot map, pert_dim "
            f"{var_dims['pert_dim']} in var_dims.pkl"
        )
    with torch.serialization.safe_globals(list(SAFE_GLOBALS)):
        model = state_model_class().load_from_checkpoint(
            run / "checkpoints" / "final.ckpt", map_location=device, weights_only=True
        )
    return Released(model.eval(), [str(v) for v in vocabulary], var_dims)
