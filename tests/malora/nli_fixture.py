"""A tiny NLI benchmark in the KnOTS layout, built locally (no network): a Llama
sequence-classification model from a config with a word-level tokenizer, two tasks'
split files (a 3-class parquet task with SNLI's −1 rows, a binary JSON-lines task with text
labels and one labelled split) and one peft SEQ_CLS LoRA per task trained on its task (r 4,
q/k/v/o, adapter_model.bin with the task's score head)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

CUES = ("cat", "dog", "park")  # one in each sentence; the label compares the two
FILLER = ("a", "man", "the", "woman", "is", "in", "near", "big", "small", "red")
SPECIAL = ("<pad>", "<s>", "</s>", "<unk>")


def _tokenizer(model_dir: Path):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    words = [*SPECIAL, *FILLER, *CUES]
    vocab = {w: i for i, w in enumerate(words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    # Llama-3's pair template: BOS before each sentence, no EOS (pad falls back to EOS)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    fast.save_pretrained(model_dir)
    return len(vocab)


def _sentence(rng, n) -> str:
    return " ".join(rng.choice(FILLER, size=n))


def _pairs(rng, n, classes):
    """Pairs whose label needs both sentences (attention, not the head alone): the premise
    and the hypothesis each hold a cue word, the label is their difference mod ``classes``."""
    first_cue, second_cue = rng.integers(0, 3, size=n), rng.integers(0, 3, size=n)
    labels = (second_cue - first_cue) % 3 % classes
    first = [
        f"{_sentence(rng, rng.integers(1, 4))} {CUES[c]} {_sentence(rng, 2)}" for c in first_cue
    ]
    second = [f"{_sentence(rng, rng.integers(1, 3))} {CUES[c]}" for c in second_cue]
    return first, second, labels


def _write_tasks(root: Path, rng):
    import pandas as pd

    files = {}
    three = {}
    for split, n in (("validation", 30), ("test", 36)):
        premise, hypothesis, y = _pairs(rng, n, 3)
        y[:2] = -1  # SNLI's unlabelled rows: dropped by the loader
        path = root / f"three_{split}.parquet"
        pd.DataFrame({"premise": premise, "hypothesis": hypothesis, "label": y}).to_parquet(path)
        three[split] = str(path)
    files["three"] = {
        "calibration": [three["validation"]],
        "test": [three["test"]],
        "columns": ["premise", "hypothesis"],
        "labels": {"0": 0, "1": 1, "2": 2},
    }
    question, sentence, y = _pairs(rng, 48, 2)
    path = root / "binary_validation.jsonl"
    with open(path, "w") as handle:
        for q, s, label in zip(question, sentence, y, strict=True):
            handle.write(json.dumps({"text1": q, "text2": s, "label": ["yes", "no"][label]}) + "\n")
    files["binary"] = {
        "calibration": [str(path)],
        "test": [str(path)],
        "columns": ["text1", "text2"],
        "labels": {"yes": 0, "no": 2},  # KnOTS's binary tasks: classes 0 and 2 of the head
        "holdout": {"fraction": 0.25, "shuffle": True, "seed": 42},
    }
    return files


def _train_adapter(model_dir, tokenizer, spec, out_dir, steps=150):
    """One SEQ_CLS LoRA (and its head) trained on the task's rows, saved as KnOTS's are."""
    import pandas as pd
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForSequenceClassification

    path = spec["calibration"][0]
    frame = pd.read_parquet(path) if path.endswith(".parquet") else pd.read_json(path, lines=True)
    y = np.array([spec["labels"].get(str(v), -1) for v in frame["label"]])
    frame, y = frame[y >= 0], torch.as_tensor(y[y >= 0])
    batch = tokenizer(
        *[frame[c].tolist() for c in spec["columns"]], padding=True, return_tensors="pt"
    )
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, num_labels=3)
    model.config.pad_token_id = tokenizer.pad_token_id
    lora = LoraConfig(
        task_type="SEQ_CLS",
        r=4,
        lora_alpha=4,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
    )
    peft_model = get_peft_model(model, lora)
    optimiser = torch.optim.Adam([p for p in peft_model.parameters() if p.requires_grad], lr=0.03)
    for _ in range(steps):
        optimiser.zero_grad()
        torch.nn.functional.cross_entropy(peft_model(**batch).logits, y).backward()
        optimiser.step()
    peft_model.eval()
    peft_model.save_pretrained(out_dir, safe_serialization=False)
    return peft_model


def tiny_nli_fixture(root):
    """{model_dir, tasks: {name: {adapter, calibration, test, columns, labels, [holdout],
    peft_model}}} of local paths."""
    import torch
    from transformers import LlamaConfig, LlamaForSequenceClassification

    from repro.malora.nli_data import load_tokenizer

    root = Path(root)
    model_dir = root / "model"
    model_dir.mkdir(parents=True)
    vocab_size = _tokenizer(model_dir)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=1,  # grouped-query attention, as Llama-3: k/v are narrower
        max_position_embeddings=64,
        num_labels=3,
        bos_token_id=1,
        eos_token_id=2,
    )
    torch.manual_seed(0)
    LlamaForSequenceClassification(config).save_pretrained(model_dir)
    tasks = _write_tasks(root, np.random.default_rng(0))
    tokenizer = load_tokenizer(model_dir)
    for name, spec in tasks.items():
        torch.manual_seed(1)
        out = root / f"adapter_{name}"
        spec["peft_model"] = _train_adapter(model_dir, tokenizer, spec, out)
        spec["adapter"] = [str(out / "adapter_config.json"), str(out / "adapter_model.bin")]
    return {"model_dir": str(model_dir), "tasks": tasks}
