"""Full-scale backbones: where their code comes from, how they load, where adapters attach.

DUSt3R, MASt3R and VGGT are not on PyPI. A download rule fetches the official code as a
GitHub archive at a pinned commit (DUSt3R's ``croco`` submodule is a second archive, since
GitHub archives leave submodules out) and the released checkpoint; ``unpack_code`` lays the
archives out as a source tree and ``load_backbone`` imports the model class from it.
``BACKBONES`` says, per backbone, which modules the adapters hook (the same code path is
tested on local module trees with the same names, tests/r3_adapter/trees.py) and how the
relational adapter reads the cross-view attention.
"""

from __future__ import annotations

import dataclasses
import importlib
import shutil
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from repro.r3_adapter.methods import Targets
from repro.r3_adapter.sites import CrossAttentionSite, GlobalAttentionSite

VGGT_TARGETS = Targets(
    linears=r".*aggregator\.(frame|global)_blocks\.\d+\.attn\.(qkv|proj)",
    norms=r"aggregator\.(frame|global)_blocks\.\d+\.norm(1|2)$",
    self_attention=r"aggregator\.frame_blocks\.\d+\.attn$",
    cross_attention=r"aggregator\.global_blocks\.\d+\.attn$",
    mlp=r"aggregator\.(frame|global)_blocks\.\d+\.mlp$",
)


@dataclasses.dataclass(frozen=True)
class Backbone:
    module: str  # importable once the code tree is on sys.path
    cls: str
    patch_size: int
    targets: Targets
    site: Callable[[nn.Module, tuple[int, int]], CrossAttentionSite | GlobalAttentionSite]
    load: str  # "from_pretrained" (a .pth with its own args) or "state_dict"


BACKBONES = {
    "dust3r": Backbone(
        "dust3r.model",
        "AsymmetricCroCo3DStereo",
        16,
        Targets(),
        lambda model, grid: CrossAttentionSite(grid),
        "from_pretrained",
    ),
    "vggt": Backbone(
        "vggt.models.vggt",
        "VGGT",
        14,
        VGGT_TARGETS,
        lambda model, grid: GlobalAttentionSite(grid, model.aggregator.patch_start_idx),
        "state_dict",
    ),
}


def _extract(archive: Path, dest: Path) -> None:
    """Unpack a GitHub archive (one top folder ``<repo>-<commit>/``) into ``dest``."""
    with tarfile.open(archive) as tar:
        tops = {Path(m.name).parts[0] for m in tar.getmembers() if m.name.strip("./")}
        if len(tops) != 1:
            raise ValueError(f"{archive}: expected one top-level folder, found {sorted(tops)}")
        staging = dest.parent / f".{dest.name}.unpacking"
        shutil.rmtree(staging, ignore_errors=True)
        tar.extractall(staging, filter="data")
    shutil.rmtree(dest, ignore_errors=True)
    (staging / tops.pop()).rename(dest)
    shutil.rmtree(staging)


def unpack_code(archive: str, dest: str, submodules: dict[str, str] | None = None) -> Path:
    """The source tree of ``archive`` at ``dest``, each submodule archive at its path."""
    dest = Path(dest)
    _extract(Path(archive), dest)
    for path, sub in (submodules or {}).items():
        _extract(Path(sub), dest / path)
    return dest


def load_backbone(name: str, code_dir: str, checkpoint: str, device: torch.device) -> nn.Module:
    """Import the backbone class from its code tree and load the checkpoint (eval mode)."""
    spec = BACKBONES[name]
    if not Path(checkpoint).is_file():
        raise FileNotFoundError(f"{name} checkpoint {checkpoint} is missing (offline node?)")
    if code_dir not in sys.path:
        sys.path.insert(0, code_dir)
    cls = getattr(importlib.import_module(spec.module), spec.cls)
    if spec.load == "from_pretrained":
        model = cls.from_pretrained(checkpoint)
    else:
        model = cls()
        model.load_state_dict(torch.load(checkpoint, map_location="cpu", weights_only=True))
    return model.to(device).eval()
