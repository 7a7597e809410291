"""Cell sentences: S control cells of one line carrying one perturbation, and their targets.

The perturbation vocabulary puts the control first (index 0), so the model also learns to
map controls to controls; Δ̂ is then measured against the model's own predicted controls.
"""

from __future__ import annotations

import dataclasses

import anndata as ad
import numpy as np
import torch

from repro.st_reliability.data import CONTROL


@dataclasses.dataclass
class CellIndex:
    """Encoded cells and, per (line, perturbation), the rows holding its cells."""

    cells: torch.Tensor  # (n_cells, dim) encoded expression
    rows: dict[tuple[str, str], torch.Tensor]
    vocabulary: list[str]  # perturbation names, control first
    lines: list[str]

    @classmethod
    def build(cls, adata: ad.AnnData, encoded: np.ndarray) -> CellIndex:
        obs = adata.obs
        perts = sorted(set(obs["pert_name"].astype(str)) - {CONTROL})
        groups = obs.groupby(["celltype_name", "pert_name"], observed=True).indices
        rows = {(str(c), str(p)): torch.as_tensor(i) for (c, p), i in groups.items()}
        lines = sorted(set(obs["celltype_name"].astype(str)))
        return cls(torch.as_tensor(encoded, dtype=torch.float32), rows, [CONTROL, *perts], lines)

    def one_hot(self, names: list[str], repeat: int = 1) -> torch.Tensor:
        """One-hot rows of ``names``, each repeated ``repeat`` times in a row."""
        index = {p: i for i, p in enumerate(self.vocabulary)}
        ids = torch.tensor([index[p] for p in names]).repeat_interleave(repeat)
        return torch.nn.functional.one_hot(ids, len(self.vocabulary)).float()


def sample_rows(rows: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    """n rows of a group, without replacement when it has enough cells."""
    if len(rows) >= n:
        return rows[torch.randperm(len(rows), generator=generator)[:n]]
    return rows[torch.randint(len(rows), (n,), generator=generator)]


def training_batch(
    index: CellIndex,
    pairs: list[tuple[str, str]],
    *,
    n_sets: int,
    set_len: int,
    control_fraction: float,
    shuffle_labels: bool,
    generator: torch.Generator,
) -> dict[str, torch.Tensor]:
    """A State training batch: flattened (n_sets · S, ·) tensors, as its forward expects.

    ``control_fraction`` of the sets are control → control; ``shuffle_labels`` (the
    shuffled-embedding null) gives each set a random perturbation label instead of its own.
    """
    basal, target, labels = [], [], []
    for _ in range(n_sets):
        if torch.rand(1, generator=generator).item() < control_fraction:
            line = index.lines[torch.randint(len(index.lines), (1,), generator=generator)]
            pert = CONTROL
        else:
            line, pert = pairs[torch.randint(len(pairs), (1,), generator=generator)]
        basal.append(sample_rows(index.rows[(line, CONTROL)], set_len, generator))
        target.append(sample_rows(index.rows[(line, pert)], set_len, generator))
        if shuffle_labels:
            pert = index.vocabulary[torch.randint(len(index.vocabulary), (1,), generator=generator)]
        labels.append(pert)
    return {
        "ctrl_cell_emb": index.cells[torch.cat(basal)],
        "pert_cell_emb": index.cells[torch.cat(target)],
        "pert_emb": index.one_hot(labels, repeat=set_len),  # one label per cell of a set
    }


def basal_sentences(
    index: CellIndex, *, n_sentences: int, set_len: int, seed: int
) -> dict[str, torch.Tensor]:
    """Fixed control sentences per line (n_sentences, S rows each) for evaluation: every
    perturbation of a line is predicted from the same basal cells as its controls."""
    generator = torch.Generator().manual_seed(seed)
    return {
        line: torch.stack(
            [
                sample_rows(index.rows[(line, CONTROL)], set_len, generator)
                for _ in range(n_sentences)
            ]
        )
        for line in index.lines
    }
