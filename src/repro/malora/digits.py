"""scikit-learn's digits as a small real multi-task check (brief §6b), built like the KnOTS
benchmark: an MLP encoder pre-trained on digits 0–3; a frozen 10-way linear head fitted on
the frozen encoder's features (the stand-in for CLIP's text heads: every task has its head
before fine-tuning); one peft LoRA per task ({4,5,6}, {7,8,9}) on the encoder layers only,
trained with the task's own head (its classes' logits)."""

from __future__ import annotations

import dataclasses
import logging

import torch
from torch import nn

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class DigitsDesign:
    tasks: tuple[tuple[int, ...], ...] = ((0, 1, 2, 3), (4, 5, 6), (7, 8, 9))  # task 0 = base
    split: tuple[float, float, float] = (0.45, 0.25, 0.30)  # train / calibration pool / test
    hidden: tuple[int, int] = (64, 32)
    rank: int = 4
    lora_alpha: int = 4
    base_steps: int = 300
    adapter_steps: int = 300
    lr: float = 0.01
    weight_decay: float = 1e-4
    head_c: float = 1.0  # inverse L2 strength of the logistic-regression head
    targets: tuple[str, ...] = ("fc1", "fc2")  # LoRA on the encoder; the head stays frozen


@dataclasses.dataclass(frozen=True)
class Split:
    x: torch.Tensor
    y: torch.Tensor

    def task(self, classes) -> Split:
        keep = torch.isin(self.y, torch.tensor(classes))
        return Split(self.x[keep], self.y[keep])


class MLP(nn.Module):
    """Encoder 64 → 64 → 32 (ReLU) and a linear head over all 10 digits."""

    def __init__(self, hidden=(64, 32), n_classes: int = 10):
        super().__init__()
        self.fc1 = nn.Linear(64, hidden[0])
        self.fc2 = nn.Linear(hidden[0], hidden[1])
        self.head = nn.Linear(hidden[1], n_classes)

    def forward(self, x):
        return self.head(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def load_splits(design: DigitsDesign, seed: int) -> dict[str, Split]:
    """Stratified train / calibration-pool / test split of the 1,797 images (pixels / 16)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x = x / 16.0
    train_frac, calib_frac, test_frac = design.split
    rest_x, test_x, rest_y, test_y = train_test_split(
        x, y, test_size=test_frac, stratify=y, random_state=seed
    )
    train_x, calib_x, train_y, calib_y = train_test_split(
        rest_x,
        rest_y,
        test_size=calib_frac / (train_frac + calib_frac),
        stratify=rest_y,
        random_state=seed,
    )

    def as_split(a, b):
        return Split(torch.tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.long))

    return {
        "train": as_split(train_x, train_y),
        "calibration": as_split(calib_x, calib_y),
        "test": as_split(test_x, test_y),
    }


def restricted_logits(logits: torch.Tensor, classes) -> torch.Tensor:
    """The task's own head: the logits of its classes only."""
    return logits[:, list(classes)]


def local_labels(y: torch.Tensor, classes) -> torch.Tensor:
    lookup = torch.full((10,), -1, dtype=torch.long)
    lookup[list(classes)] = torch.arange(len(classes))
    return lookup[y]


def _fit(model: nn.Module, params, data: Split, classes, *, steps, lr, wd) -> float:
    """Full-batch AdamW on the cross-entropy of the task's own head; returns the last loss."""
    optimiser = torch.optim.AdamW(params, lr=lr, weight_decay=wd)
    target = local_labels(data.y, classes)
    for _ in range(steps):
        optimiser.zero_grad()
        loss = nn.functional.cross_entropy(restricted_logits(model(data.x), classes), target)
        loss.backward()
        optimiser.step()
    return float(loss.detach())


def features(model: MLP, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return torch.relu(model.fc2(torch.relu(model.fc1(x))))


def train_base(design: DigitsDesign, train: Split, seed: int) -> MLP:
    """Pre-train on digits 0–3, then fit the frozen 10-way head on the frozen features."""
    from sklearn.linear_model import LogisticRegression

    torch.manual_seed(seed)
    model = MLP(design.hidden)
    loss = _fit(
        model,
        model.parameters(),
        train.task(design.tasks[0]),
        design.tasks[0],
        steps=design.base_steps,
        lr=design.lr,
        wd=0.0,
    )
    probe = LogisticRegression(C=design.head_c, max_iter=10_000)
    probe.fit(features(model, train.x).numpy(), train.y.numpy())
    with torch.no_grad():
        model.head.weight.copy_(torch.as_tensor(probe.coef_, dtype=torch.float32))
        model.head.bias.copy_(torch.as_tensor(probe.intercept_, dtype=torch.float32))
    log.info(
        "base model: pre-training loss %.4f, head train accuracy %.3f",
        loss,
        probe.score(features(model, train.x).numpy(), train.y.numpy()),
    )
    return model


def train_adapters(design: DigitsDesign, base: MLP, train: Split, seed: int):
    """A peft model holding one LoRA adapter per fine-tuning task (``task1``, ``task2``, …)."""
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=design.rank,
        lora_alpha=design.lora_alpha,
        lora_dropout=0.0,
        target_modules=list(design.targets),
    )
    model = None
    for t, classes in enumerate(design.tasks[1:], start=1):
        torch.manual_seed(seed * 100 + t)
        name = f"task{t}"
        if model is None:
            model = get_peft_model(base, config, adapter_name=name)
        else:
            model.add_adapter(name, config)
        model.set_adapter(name)
        params = [p for n, p in model.named_parameters() if f".{name}." in n]
        loss = _fit(
            model,
            params,
            train.task(classes),
            classes,
            steps=design.adapter_steps,
            lr=design.lr,
            wd=design.weight_decay,
        )
        log.info("adapter %s: final train loss %.4f", name, loss)
    return model
