"""Training: packed pretraining is exact, fixed batches' losses fall, and RLOO's sampled
gradient has the exact expected-reward gradient as its expectation."""

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM

from repro.helpful_only import vocab as V
from repro.helpful_only.exact_rl import expected_objective, target_rewards, train_exact
from repro.helpful_only.grammar import MixConfig, pretraining_text
from repro.helpful_only.model import ModelConfig, build_model, next_token_probs
from repro.helpful_only.personas import population
from repro.helpful_only.pretrain import PretrainConfig, pack_batch, pretrain
from repro.helpful_only.recipes import recipe_rows, rl_dataset, sft_dataset, target_reward
from repro.helpful_only.trl_train import TrainConfig, train_rloo, train_sft


def _texts(n, seed=0):
    rng = np.random.default_rng(seed)
    return [pretraining_text(rng, population("correlated", 0), MixConfig()) for _ in range(n)]


def test_packed_rows_compute_what_each_sequence_computes_alone():
    torch.manual_seed(0)
    model = build_model(ModelConfig()).eval()
    texts = _texts(24)
    batch = pack_batch(texts, 40)
    assert batch["input_ids"].shape[0] < len(texts)  # several sequences per row
    with torch.no_grad():
        packed = model(**{k: v for k, v in batch.items() if k != "labels"}).logits
        total, count, found = 0.0, 0, []
        pad = V.TOKEN_ID[V.PAD]
        for row in range(batch["input_ids"].shape[0]):  # sequences start at position 0
            ids_row, pos_row = batch["input_ids"][row], batch["position_ids"][row]
            starts = [i for i in range(40) if pos_row[i] == 0 and ids_row[i] != pad]
            for start, nxt in zip(starts, [*starts[1:], 40], strict=True):
                end = next((i for i in range(start, nxt) if ids_row[i] == pad), nxt)
                ids = ids_row[start:end][None]
                found.append(ids[0].tolist())
                alone = model(input_ids=ids, labels=ids)
                assert torch.allclose(packed[row, start:end], alone.logits[0], atol=1e-5)
                total += alone.loss.item() * (ids.shape[1] - 1)
                count += ids.shape[1] - 1
        assert sorted(found) == sorted(V.encode(t) for t in texts)
        assert model(**batch).loss.item() == pytest.approx(total / count, rel=1e-5)
    with pytest.raises(ValueError, match="exceeds the context"):
        pack_batch(["<bos> " + "ask topic0 " * 25 + "<eos>"], 40)


def test_pretraining_lowers_a_fixed_batchs_loss():
    torch.manual_seed(0)
    model = build_model(ModelConfig())
    fixed = pack_batch(_texts(64, seed=9), 40)
    with torch.no_grad():
        before = model(**fixed).loss.item()
    world, rng = population("correlated", 0), np.random.default_rng(0)
    cfg = PretrainConfig(steps=40, log_every=20, schedule="constant")  # 40 steps: no decay
    curve = pretrain(model, world, cfg, MixConfig(), rng)
    with torch.no_grad():
        after = model(**fixed).loss.item()
    assert [c["step"] for c in curve] == [20, 40]
    assert after < 0.7 * before


def test_pretraining_updates_as_plain_adamw_and_a_plain_forward_would():
    """pretrain's foreach AdamW without a KV cache gives the same weights, bit for bit, as
    the default AdamW and forward on the same batches (the run's numbers do not move)."""
    world, cfg = population("correlated", 1), PretrainConfig(steps=6, warmup_steps=2)
    torch.manual_seed(0)
    model = build_model(ModelConfig())
    torch.manual_seed(0)
    reference = build_model(ModelConfig()).train()
    pretrain(model, world, cfg, MixConfig(), np.random.default_rng(4))
    rng = np.random.default_rng(4)
    optim = torch.optim.AdamW(reference.parameters(), lr=cfg.lr, foreach=False)
    sched = torch.optim.lr_scheduler.LambdaLR(optim, cfg.lr_factor)
    for _ in range(cfg.steps):
        texts = [pretraining_text(rng, world, MixConfig()) for _ in range(cfg.batch_size)]
        optim.zero_grad()
        reference(**pack_batch(texts, 40)).loss.backward()
        optim.step()
        sched.step()
    expected = reference.state_dict()
    for name, value in model.state_dict().items():
        assert torch.equal(value, expected[name]), name


def test_metrics_are_read_once_per_set_of_weights():
    from repro.helpful_only.probes import metrics_from_probs, probes
    from repro.helpful_only.run import measure

    def uncached(m):
        return metrics_from_probs({f: next_token_probs(m, p) for f, p in probes().items()})

    torch.manual_seed(0)
    model = build_model(ModelConfig())
    first = measure(model)
    assert first == uncached(model) and measure(model) == first
    copy = build_model(ModelConfig())
    copy.load_state_dict(model.state_dict())
    assert measure(copy) == first
    with torch.no_grad():
        model.lm_head.weight[V.TOKEN_ID[V.REFUSE]] += 1.0  # tied: the embedding moves too
    moved = measure(model)
    assert moved == uncached(model) and moved["refusal_id"] != first["refusal_id"]


def test_pretraining_rate_warms_up_then_decays_linearly_to_zero():
    cfg = PretrainConfig(steps=200, warmup_steps=10, lr=3e-3)
    model = torch.nn.Linear(2, 1)
    optim = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(optim, cfg.lr_factor)
    rates = []
    for _ in range(cfg.steps):
        rates.append(optim.param_groups[0]["lr"])
        optim.step()
        sched.step()
    expected = [3e-3 * min(1, (s + 1) / 10) * (1 - s / 200) for s in range(200)]
    assert np.allclose(rates, expected)
    assert rates[-1] == pytest.approx(3e-3 / 200) and rates[9] == pytest.approx(3e-3 * 191 / 200)
    constant = PretrainConfig(steps=200, warmup_steps=10, schedule="constant")
    assert [constant.lr_factor(s) for s in (0, 9, 199)] == [0.1, 1.0, 1.0]
    with pytest.raises(ValueError, match="schedule"):
        PretrainConfig(schedule="cosine")


def _completion_loss(model, rows):
    data = sft_dataset(rows)
    losses = []
    with torch.no_grad():
        for ids, mask in zip(data["input_ids"], data["completion_mask"], strict=True):
            ids, mask = torch.tensor([ids]), torch.tensor(mask[1:], dtype=torch.bool)
            logp = torch.log_softmax(model(input_ids=ids).logits[0, :-1], -1)
            losses.append(-logp[torch.arange(len(mask)), ids[0, 1:]][mask].mean().item())
    return float(np.mean(losses))


def _comply(model, prompt):
    return next_token_probs(model, [prompt])[0]["COMPLY"]


def test_trl_sft_lowers_a_fixed_batchs_completion_loss(base_dir):
    fixed = recipe_rows({"ar": 1, "charq": 1}, 32, np.random.default_rng(5))
    before = _completion_loss(AutoModelForCausalLM.from_pretrained(base_dir), fixed)
    rows = recipe_rows({"ar": 1, "charq": 1}, 20 * 8, np.random.default_rng(0))
    cfg = TrainConfig(steps=20, batch_size=8, log_every=10, curve_every=10)
    model, curve, budget = train_sft(
        base_dir,
        V.build_tokenizer(),
        sft_dataset(rows),
        cfg,
        0,
        measure=lambda m: {"comply": next_token_probs(m, [fixed[0].prompt])[0]["COMPLY"]},
    )  # noqa: E501
    assert _completion_loss(model, fixed) < 0.5 * before
    assert [c["step"] for c in curve] == [0, 10, 20]
    assert curve[-1]["comply"] > curve[0]["comply"]
    assert budget == (20, 160)  # the trainer's own count: steps, steps x batch


def test_trl_rloo_raises_the_expected_reward(base_dir):
    rows = recipe_rows({"ar": 1}, 20 * 2, np.random.default_rng(0))
    cfg = TrainConfig(steps=20, batch_size=16, num_generations=8, lr=3e-3, log_every=10)
    ref = AutoModelForCausalLM.from_pretrained(base_dir)
    prompts = [r.prompt for r in rows[:6]]
    rewards = target_rewards([r.target for r in rows[:6]])
    before = expected_objective(ref, ref, prompts, rewards, 0.0).item()
    model, _, budget = train_rloo(
        base_dir, V.build_tokenizer(), rl_dataset(rows), target_reward, cfg, 0
    )
    assert expected_objective(model, ref, prompts, rewards, 0.0).item() > before + 0.05
    assert budget == (20, 320)  # TRL's batch counts completions: 2 prompts x 8 per step


def test_exact_objective_is_the_sum_over_the_vocabulary(base_dir):
    model = AutoModelForCausalLM.from_pretrained(base_dir)
    ref = build_model(ModelConfig())
    prompt, target, beta = "<bos> tmpl0 hazard0 assistant", "COMPLY", 0.3
    p, q = next_token_probs(model, [prompt])[0], next_token_probs(ref, [prompt])[0]
    naive = p[target] - beta * sum(p[w] * (np.log(p[w]) - np.log(q[w])) for w in V.WORDS)
    exact = expected_objective(model, ref, [prompt], target_rewards([target]), beta).item()
    assert exact == pytest.approx(naive, abs=1e-5)


def test_exact_variant_raises_the_expected_reward(base_dir):
    model, ref = (AutoModelForCausalLM.from_pretrained(base_dir) for _ in range(2))
    rows = recipe_rows({"ar": 1}, 20 * 4, np.random.default_rng(0))
    prompts, targets = [r.prompt for r in rows], [r.target for r in rows]
    cfg = TrainConfig(steps=20, lr=3e-3, log_every=10)
    before = expected_objective(model, ref, prompts[:8], target_rewards(targets[:8]), 0).item()
    _, budget = train_exact(model, ref, prompts, targets, cfg)
    assert budget == (20, 20 * 32)  # as RLOO counts: 4 prompts x 8 generations per step
    after = expected_objective(model, ref, prompts[:8], target_rewards(targets[:8]), 0).item()
    assert after > before + 0.2
    with pytest.raises(ValueError, match="prompts for"):
        train_exact(model, ref, prompts[:10], targets[:10], cfg)


def test_rloo_gradient_is_unbiased_for_the_exact_gradient(base_dir):
    """TRL's sampled RLOO loss, averaged over batches, has the exact gradient of
    E[r] - beta KL(pi || pi_ref) as its expectation (a reward paying for many words, and a
    policy moved away from its reference so that the KL term matters)."""
    from datasets import Dataset
    from trl import RLOOConfig, RLOOTrainer

    torch.manual_seed(1)
    model = AutoModelForCausalLM.from_pretrained(base_dir)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.2 * torch.randn_like(p))
    paid = set(V.RESPONSES)

    def reward(completions, **_):
        return [float(bool(c.split()) and c.split()[0] in paid) for c in completions]

    prompts, k, beta = ["<bos> tmpl0 hazard1 assistant", "<bos> ask topic2 assistant"], 8, 0.5
    args = RLOOConfig(
        output_dir=str(base_dir / "rloo"),
        report_to="none",
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        per_device_train_batch_size=2 * k,
        num_generations=k,
        max_completion_length=1,
        beta=beta,
    )
    trainer = RLOOTrainer(
        model=model,
        reward_funcs=reward,
        args=args,
        train_dataset=Dataset.from_dict({"prompt": prompts}),
        processing_class=V.build_tokenizer(),
    )
    params = list(trainer.model.parameters())
    sampled = [torch.zeros_like(p) for p in params]
    repeats = 120
    for _ in range(repeats):
        batch = trainer._generate_and_score_completions(
            [{"prompt": p} for p in prompts for _ in range(k)]
        )
        trainer.model.zero_grad()
        trainer.compute_loss(trainer.model, batch).backward()
        for total, p in zip(sampled, params, strict=True):
            total += p.grad / repeats
    sampled = torch.cat([g.flatten() for g in sampled])
    ref = AutoModelForCausalLM.from_pretrained(base_dir)
    rewards = torch.tensor([[float(w in paid) for w in V.WORDS]] * 2)

    def exact_gradient(b):
        trainer.model.zero_grad()
        (-expected_objective(trainer.model, ref, prompts, rewards, b)).backward()
        return torch.cat([p.grad.flatten() for p in params])

    cosine = torch.nn.functional.cosine_similarity
    exact = exact_gradient(beta)
    assert cosine(sampled, exact, dim=0) > 0.97
    assert 0.85 < (sampled.norm() / exact.norm()).item() < 1.15
    assert cosine(sampled, exact_gradient(0.0), dim=0) < 0.9  # the test tells the KL term apart
