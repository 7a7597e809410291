"""A SAGE-style mean-aggregation GNN whose messages carry per-edge weights (Pair-Align's scheme).

Each layer is PyG's ``GraphConv(aggr="mean")`` (pure-torch path: no torch-scatter, no
SparseTensor): ``h_u' = W_root h_u + W_rel (1/deg(u)) sum_{(u,v) in E} w_uv h_v + b``. The mean
divides by the *number* of neighbours, not by the sum of weights, as in Pair-Align's
``GS_reweight``: with gamma weights the source neighbourhood average then imitates the target's.

Edge direction: column ``(u, v)`` of ``edge_index`` is a message from ``v`` into ``u``
(``flow="target_to_source"``, Pair-Align's convention), so the weight of that column is
``gamma[y_u, y_v]``: row = receiving node's class, column = neighbour's class.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch_geometric.nn import GraphConv


class WeightedSAGE(torch.nn.Module):
    """``layers`` weighted mean-aggregation layers with ReLU, then a linear head (logits)."""

    def __init__(
        self,
        *,
        in_features: int,
        num_classes: int,
        hidden: int = 32,
        layers: int = 2,
        dropout: float = 0.5,
    ):
        super().__init__()
        if layers < 1:
            raise ValueError(f"layers must be >= 1, got {layers}")
        widths = [in_features] + [hidden] * layers
        self.convs = torch.nn.ModuleList(
            GraphConv(a, b, aggr="mean", flow="target_to_source")
            for a, b in zip(widths[:-1], widths[1:], strict=True)
        )
        self.head = torch.nn.Linear(hidden, num_classes)
        self.dropout = dropout

    def hidden(
        self,
        x: torch.Tensor,
        edge_index: torch.Tensor,
        edge_weight: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The last layer's node representations (what the pair classifier reads)."""
        h = x
        for conv in self.convs:
            h = F.relu(conv(h, edge_index, edge_weight))
            # The reference code calls F.dropout without training=..., so its dropout also
            # runs at evaluation time; deliberately fixed here: dropout in training mode only.
            h = F.dropout(h, p=self.dropout, training=self.training)
        return h

    def forward(
        self,
        x: torch.Tensor,
        edge_index: torch.Tensor,
        edge_weight: torch.Tensor | None = None,
    ) -> torch.Tensor:
        return self.head(self.hidden(x, edge_index, edge_weight))
