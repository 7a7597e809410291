"""3R-Adapter: relational PEFT for feed-forward two-view 3D reconstruction under shift."""

from repro.r3_adapter.adapters import SSF, VPT, AdaptFormer
from repro.r3_adapter.attention import AttentionCapture, diagnostics, expose_attention
from repro.r3_adapter.data import Observed, SplitConfig, make_splits, split_from_arrays
from repro.r3_adapter.methods import Adapted, Targets, build_method
from repro.r3_adapter.metrics import reconstruction_metrics
from repro.r3_adapter.model import ModelConfig, TwoViewTransformer
from repro.r3_adapter.relational import RelationalAdapter, RelationalConfig, RelationSite
from repro.r3_adapter.scenes import SceneConfig, Scenes, make_scenes
from repro.r3_adapter.shift import LowLight, observe
from repro.r3_adapter.sites import CrossAttentionSite, GlobalAttentionSite, RelationalHooks

__all__ = [
    "SSF",
    "VPT",
    "AdaptFormer",
    "Adapted",
    "AttentionCapture",
    "CrossAttentionSite",
    "GlobalAttentionSite",
    "LowLight",
    "ModelConfig",
    "Observed",
    "RelationSite",
    "RelationalAdapter",
    "RelationalConfig",
    "RelationalHooks",
    "SceneConfig",
    "Scenes",
    "SplitConfig",
    "Targets",
    "TwoViewTransformer",
    "build_method",
    "diagnostics",
    "expose_attention",
    "make_scenes",
    "make_splits",
    "observe",
    "reconstruction_metrics",
    "split_from_arrays",
]
