"""The recipes' training through TRL: ``SFTTrainer`` (completion-only loss) and
``RLOOTrainer`` (a programmatic reward, KL penalty to the starting model).

Both start from a ``save_pretrained`` folder (model + tokenizer): RLOO rebuilds its
reference model from that path. TRL's log lines (loss, reward, KL, ...) go to Python
logging, so they land in the rule's log; the metric curve is read every ``curve_every``
steps by a callback.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable

os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")  # map() bars are not progress

import warnings  # noqa: E402

from transformers import PrinterCallback, TrainerCallback  # noqa: E402

from repro.helpful_only.recipes import TrainConfig  # noqa: E402

# TRL 1.16 still names transformers 5's activation checkpointing by its old name: the same
# deprecation warning on every trainer, nothing to act on here.
warnings.filterwarnings(
    "ignore", message=r".*gradient_checkpointing.* is deprecated", category=FutureWarning
)

log = logging.getLogger(__name__)


class LogCallback(TrainerCallback):
    """Sends the trainer's log dicts to Python logging, reads a metric curve, and records the
    budget the trainer itself ran: (its global step, sequences = steps x its batch)."""

    def __init__(self, name: str, curve_every: int, measure: Callable | None):
        self.name, self.curve_every, self.measure = name, curve_every, measure
        self.curve: list[dict] = []
        self.budget: tuple[int, int] | None = None

    def _measure(self, step, model):
        if self.measure is not None:
            was_training = model.training
            self.curve.append({"step": step, **self.measure(model)})
            model.train(was_training)

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self._measure(0, model)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step % self.curve_every == 0 or state.global_step == state.max_steps:
            self._measure(state.global_step, model)

    def on_train_end(self, args, state, control, **kwargs):
        per_step = args.per_device_train_batch_size * args.gradient_accumulation_steps
        self.budget = (state.global_step, state.global_step * per_step * args.world_size)

    def on_log(self, args, state, control, logs=None, **kwargs):
        shown = ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in (logs or {}).items()
        )
        log.info("%s step %d/%d: %s", self.name, state.global_step, state.max_steps, shown)


def _fit(trainer, callback: LogCallback):
    """Train; returns (model, curve, (steps, sequences) as the trainer counted them)."""
    trainer.remove_callback(PrinterCallback)  # LogCallback logs instead of printing
    trainer.train()
    return trainer.model, callback.curve, callback.budget


def _common_args(cfg: TrainConfig, seed: int, output_dir: str, device: str) -> dict:
    return dict(
        output_dir=output_dir,
        max_steps=cfg.steps,
        per_device_train_batch_size=cfg.batch_size,
        learning_rate=cfg.lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        logging_steps=cfg.log_every,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        seed=seed,
        data_seed=seed,
        use_cpu=device == "cpu",
        dataloader_num_workers=0,
        bf16=cfg.bf16,
        gradient_checkpointing=cfg.gradient_checkpointing,
    )


def _max_length(dataset, max_length: int) -> int | None:
    """TRL's truncation length; None for tokenized rows already checked to fit (TRL's
    truncation and filtering passes would only copy them)."""
    if "input_ids" not in dataset.column_names:
        return max_length
    longest = max(map(len, dataset["input_ids"]))
    if longest > max_length:
        raise ValueError(f"a training sequence has {longest} tokens, more than {max_length}")
    return None


def train_sft(
    model_dir,
    tokenizer,
    dataset,
    cfg: TrainConfig,
    seed: int,
    *,
    name="sft",
    device="cpu",
    measure=None,
    peft_config=None,
    model_kwargs: dict | None = None,
):
    """SFT of the model in ``model_dir`` on a prompt-completion dataset; returns (model,
    curve, (steps, sequences)). ``model_kwargs`` (the pinned ``revision``, ``dtype``) go to
    ``from_pretrained``.

    The tokenizer is passed in, not loaded from ``model_dir``: ``AutoTokenizer`` would pick
    the architecture's tokenizer class (Qwen2Tokenizer) over the saved word-level one.
    """
    from transformers import AutoModelForCausalLM
    from trl import SFTConfig, SFTTrainer

    callback = LogCallback(name, cfg.curve_every, measure)
    with tempfile.TemporaryDirectory() as scratch:
        args = SFTConfig(
            **_common_args(cfg, seed, scratch, device),
            completion_only_loss=True,
            max_length=_max_length(dataset, cfg.max_length),
            dataset_num_proc=None,
        )
        trainer = SFTTrainer(
            model=AutoModelForCausalLM.from_pretrained(model_dir, **(model_kwargs or {})),
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            callbacks=[callback],
            peft_config=peft_config,
        )
        return _fit(trainer, callback)


def train_rloo(
    model_dir,
    tokenizer,
    dataset,
    reward,
    cfg: TrainConfig,
    seed: int,
    *,
    name="rloo",
    device="cpu",
    measure=None,
    peft_config=None,
    max_completion_length=1,
    model_kwargs: dict | None = None,
):
    """RLOO of the model in ``model_dir`` (also its KL reference); returns (model, curve,
    (steps, sequences): TRL's batch counts completions, num_generations per prompt).
    ``model_kwargs`` (revision, dtype) load both the policy and the reference: without a
    dtype TRL loads float32."""
    from trl import RLOOConfig, RLOOTrainer

    if cfg.batch_size % cfg.num_generations:
        raise ValueError(
            f"num_generations ({cfg.num_generations}) must divide batch_size ({cfg.batch_size})"
        )
    callback = LogCallback(name, cfg.curve_every, measure)
    with tempfile.TemporaryDirectory() as scratch:
        args = RLOOConfig(
            **_common_args(cfg, seed, scratch, device),
            num_generations=cfg.num_generations,
            max_completion_length=max_completion_length,
            temperature=cfg.temperature,
            beta=cfg.beta,
            model_init_kwargs=model_kwargs,
        )
        trainer = RLOOTrainer(
            model=str(model_dir),
            reward_funcs=reward,
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            callbacks=[callback],
            peft_config=peft_config,
        )
        return _fit(trainer, callback)
