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

import argparse
import ast
import dataclasses
import hashlib
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
    load: str  # "dust3r_checkpoint" (a .pth with its constructor args) or "state_dict"


BACKBONES = {
    "dust3r": Backbone(
        "dust3r.model",
        "AsymmetricCroCo3DStereo",
        16,
        Targets(),
        lambda model, grid: CrossAttentionSite(grid),
        "dust3r_checkpoint",
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


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _literal(node: ast.expr):
    """A constructor argument of DUSt3R's stored ``args.model``: literals, tuples, ±inf."""
    if isinstance(node, ast.Name) and node.id == "inf":
        return float("inf")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_literal(node.operand)
    if isinstance(node, ast.Tuple | ast.List):
        values = [_literal(e) for e in node.elts]
        return tuple(values) if isinstance(node, ast.Tuple) else values
    return ast.literal_eval(node)


def constructor_kwargs(call: str, cls_name: str) -> dict:
    """Keyword arguments of ``cls_name(...)`` as DUSt3R stores it in ``ckpt["args"].model``,
    read with ``ast`` (DUSt3R's own loader ``eval``s the string)."""
    tree = ast.parse(call.strip(), mode="eval").body
    if not (isinstance(tree, ast.Call) and getattr(tree.func, "id", None) == cls_name):
        raise ValueError(f"checkpoint args.model is not a {cls_name}(...) call: {call[:80]!r}")
    if tree.args:
        raise ValueError("checkpoint args.model has positional arguments")
    return {k.arg: _literal(k.value) for k in tree.keywords}


def load_dust3r_checkpoint(cls: type, checkpoint: str, sha256: str | None) -> nn.Module:
    """DUSt3R's released ``.pth`` ({"args": argparse.Namespace, "model": state dict}) after
    checking its pinned sha256. torch's ``weights_only=True`` rejects the Namespace, so it is
    allowed by name (``add_safe_globals``) instead of unpickling arbitrary objects; the
    constructor call stored in ``args.model`` is parsed, not evaluated, with the patch
    embedding DUSt3R's own loader substitutes."""
    if not sha256:
        raise ValueError(f"{checkpoint}: no sha256 pinned for the checkpoint; pin it first")
    found = sha256_of(checkpoint)
    if found != sha256:
        raise ValueError(f"{checkpoint}: sha256 {found} is not the pinned {sha256}")
    torch.serialization.add_safe_globals([argparse.Namespace])
    ckpt = torch.load(checkpoint, map_location="cpu", weights_only=True)
    kwargs = constructor_kwargs(ckpt["args"].model, cls.__name__)
    if kwargs.get("patch_embed_cls") == "ManyAR_PatchEmbed":  # as DUSt3R's load_model does
        kwargs["patch_embed_cls"] = "PatchEmbedDust3R"
    kwargs.setdefault("landscape_only", False)
    model = cls(**kwargs)
    model.load_state_dict(ckpt["model"], strict=False)  # DUSt3R's loader is not strict either
    return model


def load_backbone(
    name: str, code_dir: str, checkpoint: str, device: torch.device, sha256: str | None = None
) -> nn.Module:
    """Import the backbone class from its code tree and load the checkpoint (eval mode);
    DUSt3R's after checking ``sha256``."""
    spec = BACKBONES[name]
    if not Path(checkpoint).is_file():
        raise FileNotFoundError(f"{name} checkpoint {checkpoint} is missing (offline node?)")
    if code_dir not in sys.path:
        sys.path.insert(0, code_dir)
    cls = getattr(importlib.import_module(spec.module), spec.cls)
    if spec.load == "dust3r_checkpoint":
        model = load_dust3r_checkpoint(cls, checkpoint, sha256)
    else:
        model = cls()
        model.load_state_dict(torch.load(checkpoint, map_location="cpu", weights_only=True))
    return model.to(device).eval()
