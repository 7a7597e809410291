"""3R-Adapter: relational PEFT for feed-forward two-view 3D reconstruction under shift.

The public names below load on first use (PEP 562), so that ``import repro.r3_adapter`` —
which the workflow does while it parses, for TITLE — does not import torch.
"""

import importlib

TITLE = "3R-Adapter"  # the name as the paper writes it (claims ledger, report)

_EXPORTS = {
    "adapters": ["SSF", "VPT", "AdaptFormer"],
    "attention": ["AttentionCapture", "diagnostics", "expose_attention"],
    "backbones": ["BACKBONES", "load_backbone", "unpack_code"],
    "data": ["Observed", "SplitConfig", "make_splits", "split_from_arrays"],
    "methods": ["Adapted", "Targets", "build_method"],
    "metrics": ["reconstruction_metrics"],
    "model": ["ModelConfig", "TwoViewTransformer"],
    "relational": ["RelationalAdapter", "RelationalConfig", "RelationSite"],
    "scenes": ["SceneConfig", "Scenes", "make_scenes"],
    "shift": ["LowLight", "observe"],
    "sites": ["CrossAttentionSite", "GlobalAttentionSite", "RelationalHooks"],
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
