"""3R-Adapter: relational PEFT for feed-forward two-view 3D reconstruction under shift.

The public names below load on first use (repro.common.exports), so that importing the
package — which the workflow's config check does while it parses — does not import torch.
"""

from repro.common.exports import lazy_exports

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
__all__ = sorted(name for names in _EXPORTS.values() for name in names)
__getattr__, __dir__ = lazy_exports(
    __name__, {name: module for module, names in _EXPORTS.items() for name in names}
)
