"""Helpers of the MaLoRA tests: a small linear world and its trained models."""

import numpy as np

from repro.malora.linear import LinearDesign, LinearWorld, train_base, train_lora

SMALL = LinearDesign(
    dim=40,
    subspace_dim=8,
    classes_per_task=3,
    n_tasks=2,
    per_class=15,
    pretrain_per_class=15,
    calib_per_class=10,
    test_per_class=20,
)


def trained_world(overlap: float, seed: int = 0, lambdas=(1e-3, 3e-3), sizes=(1, 3)):
    """Base and adapters trained on one world; data sets by task (0 = pre-training)."""
    world = LinearWorld(SMALL, seed)
    train = [world.sample(0, SMALL.pretrain_per_class, 0.3, overlap, "train")]
    train += [
        world.sample(t + 1, SMALL.per_class * f, 0.3, overlap, "train") for t, f in enumerate(sizes)
    ]
    base = train_base(train[0], SMALL, weight_decay=1e-3, steps=400).weight
    deltas = [
        train_lora(d, base, SMALL, rank=2, lam=lam, steps=400, seed=seed).delta
        for d, lam in zip(train[1:], lambdas, strict=True)
    ]
    return world, train, base, deltas


def stack(data_sets):
    return np.concatenate([d.x for d in data_sets]), np.concatenate([d.y for d in data_sets])


def tiny_clip_fixture(root, n_tasks=2, classes=3, per_class=4):
    """A tiny CLIP model directory, one peft LoRA adapter per task (KnOTS's format: r 4,
    q/k/v/out_proj of the vision tower, adapter_model.bin) and each task's test split as two
    parquet shards with PNG images and Hugging Face ClassLabel metadata; task 0's holdout
    comes from a KnOTS-style shuffled-index file (a numpy array saved with torch.save), the
    others' from a seeded shuffle. Returns {model: [files], tasks: {...}} of paths."""
    import io
    import json
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq
    import torch
    from peft import LoraConfig, get_peft_model
    from PIL import Image
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import (
        CLIPConfig,
        CLIPImageProcessor,
        CLIPModel,
        CLIPTokenizer,
        CLIPVisionModel,
    )

    from repro.malora.fullscale_data import text_heads

    root = Path(root)
    model_dir = root / "model"
    model_dir.mkdir(parents=True)
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for ch in sorted(ByteLevel.alphabet()):
        vocab[ch] = len(vocab)
        vocab[ch + "</w>"] = len(vocab)
    CLIPTokenizer(vocab=vocab, merges=[]).save_pretrained(model_dir)
    text = dict(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        vocab_size=len(vocab),
        max_position_embeddings=64,
        eos_token_id=1,
        bos_token_id=0,
        pad_token_id=1,
    )
    vision = dict(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=32,
        patch_size=16,
    )
    torch.manual_seed(0)
    model = CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=8))
    model.save_pretrained(model_dir)
    CLIPImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
    ).save_pretrained(model_dir)
    rng = np.random.default_rng(0)
    tokenizer = CLIPTokenizer.from_pretrained(model_dir)
    processor = CLIPImageProcessor.from_pretrained(model_dir)
    tasks = {}
    for t in range(n_tasks):
        names = [f"class{t}_{c}" for c in range(classes)]
        shards, images, targets = [], [], []
        for shard in range(2):
            cells, labels = [], []
            for c in range(classes):
                for _ in range(per_class):
                    pixels = rng.integers(0, 255, (36, 40, 3), dtype=np.uint8)
                    pixels[..., c % 3] = 40 * c  # a class-dependent colour channel
                    buf = io.BytesIO()
                    Image.fromarray(pixels).save(buf, format="PNG")
                    cells.append({"bytes": buf.getvalue(), "path": None})
                    labels.append(c)
                    images.append(Image.fromarray(pixels))
                    targets.append(c)
            meta = {
                "info": {
                    "features": {
                        "image": {"_type": "Image"},
                        "label": {"_type": "ClassLabel", "names": names},
                    }
                }
            }
            table = pa.table({"image": cells, "label": labels})
            table = table.replace_schema_metadata({"huggingface": json.dumps(meta)})
            path = root / f"task{t}_test_{shard}.parquet"
            pq.write_table(table, path)
            shards.append(str(path))
        holdout = {"fraction": 0.5, "seed": t}
        if t == 0:
            holdout["indices"] = str(root / "task0_shuffled_idxs.pt")
            torch.save(rng.permutation(len(targets)), holdout["indices"])
        # a LoRA on the vision tower trained on the task's images against its zero-shot head,
        # as the KnOTS adapters are (so that each adapter classifies its own task)
        tower = CLIPVisionModel(model.config.vision_config)
        tower.load_state_dict(model.vision_model.state_dict())
        lora = LoraConfig(
            r=4, lora_alpha=4, target_modules=["q_proj", "k_proj", "v_proj", "out_proj"]
        )
        peft_model = get_peft_model(tower, lora)
        head = text_heads(model, tokenizer, names, ["a photo of a {}."], "cpu")
        pixels = processor(images=images, return_tensors="pt")["pixel_values"]
        target = torch.tensor(targets)
        params = [p for n, p in peft_model.named_parameters() if "lora_" in n]
        optimiser = torch.optim.Adam(params, lr=0.02)
        for _ in range(60):
            optimiser.zero_grad()
            emb = model.visual_projection(peft_model(pixel_values=pixels).pooler_output)
            logits = 100 * torch.nn.functional.normalize(emb, dim=-1) @ head.T
            torch.nn.functional.cross_entropy(logits, target).backward()
            optimiser.step()
        adapter_dir = root / f"adapter{t}"
        peft_model.save_pretrained(adapter_dir, safe_serialization=False)
        tasks[f"task{t}"] = {
            "adapter": [
                str(adapter_dir / "adapter_config.json"),
                str(adapter_dir / "adapter_model.bin"),
            ],
            "test": shards,
            "rows": len(targets),
            "holdout": holdout,
            "templates": ["a photo of a {}."],
            "peft_model": peft_model,
        }
    return {"model": sorted(str(p) for p in model_dir.iterdir()), "tasks": tasks, "clip": model}
