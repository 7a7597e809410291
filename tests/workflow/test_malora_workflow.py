"""MaLoRA through snakemake: the config/test.yaml part (numbers in its outputs checked), and
the full-scale jobs end to end from a local HTTP server serving a tiny CLIP, KnOTS-format
adapters and parquet image splits, and the NLI benchmark's split files and SEQ_CLS adapters
(beside a tiny local Llama: gated models are read from a local folder)."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
import yaml

from tests.conftest import ROOT, assert_claims_report_lists, snakemake
from tests.malora.malora_helpers import tiny_clip_fixture
from tests.malora.nli_fixture import tiny_nli_fixture

pytestmark = pytest.mark.workflow

CONFIG = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
P = CONFIG["papers"]["malora"]


def _json(run, name):
    return json.loads((run / "malora" / name).read_text())


def test_claims_and_checks_are_judged_from_the_run(test_run):
    claims = {c["id"]: c for c in _json(test_run, "claims.json")}
    assert set(claims) == set(P["claims"]) | set(P["checks"])
    for cid in P["checks"]:
        assert claims[cid]["type"] == "check" and claims[cid]["verdict"] == "passed", claims[cid]
    summary = _json(test_run, "metrics/summary.json")
    primary = summary["linear"]["settings"][P["linear"]["primary_setting"]]
    smallest = min(min(b["methods"]["malora"]["min_task_margin"]["per_seed"]) for b in primary)
    assert claims["c3_positive_margins"]["measured"] == pytest.approx(smallest)
    assert claims["c4_vision"]["verdict"] == "not tested at this scale"
    assert_claims_report_lists(test_run, "malora", claims)


def test_per_seed_numbers_are_consistent(test_run):
    for seed in P["seeds"]:
        doc = _json(test_run, f"metrics/linear/seed{seed}.json")
        assert doc["seed"] == seed and doc["provenance"]["seed"] == seed
        for run in doc["runs"]:
            methods = run["methods"]
            assert methods["task_arithmetic"]["alphas"] == [1.0] * P["linear"]["design"]["n_tasks"]
            margins = run["calibration_margins"]
            np.testing.assert_allclose(
                np.array(methods["malora"]["alphas"]) * margins["tasks"], margins["base"]
            )
            for name, row in methods.items():  # the oracle bounds every non-negative α
                if row["alphas"] is not None and min(row["alphas"]) >= 0:
                    assert row["union_margin"] <= run["oracle"]["union_margin"] + 1e-9, name
    summary = _json(test_run, "metrics/summary.json")
    digits = _json(test_run, "metrics/digits.json")["seeds"]
    values = [d["methods"]["malora"]["normalised_accuracy"] for d in digits]
    assert summary["digits"]["methods"]["malora"]["normalised_accuracy"]["mean"] == (
        pytest.approx(np.mean(values))
    )
    diff = summary["digits"]["paired_vs_malora"]["task_arithmetic"]["normalised_accuracy"]
    ta = [d["methods"]["task_arithmetic"]["normalised_accuracy"] for d in digits]
    assert diff["mean"] == pytest.approx(np.mean(np.array(values) - ta))
    assert diff["low"] <= diff["mean"] <= diff["high"]


def test_figures_are_drawn(test_run):
    for name in ("margins", "tradeoff", "alignment", "landscape", "table", "ablations"):
        image = mpimg.imread(test_run / "malora" / "figures" / f"{name}.png")
        assert image.shape[0] > 200 and image.shape[1] > 300, name
        assert image[..., :3].std() > 0.05, name  # not a blank canvas
        assert (test_run / "malora" / "figures" / f"{name}.pdf").stat().st_size > 1000


def _full_config(tmp_path, fixture, nli, base):
    """The test config plus a full scale of one CLIP and one NLI backbone whose downloads are
    the local files."""
    config = copy.deepcopy(CONFIG)
    config["downloads"] = {}
    files = {"model_files": [], "tasks": {}}

    def served(path, name):
        digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
        rel = f"{name}/{path.split('/')[-1]}"
        (tmp_path / "www" / name).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, tmp_path / "www" / rel)
        config["downloads"][name] = {"url": f"{base}/{rel}", "sha256": digest}
        return name

    for i, path in enumerate(fixture["model"]):
        files["model_files"].append(served(path, f"malora_tiny_model_{i}"))
    for task, t in fixture["tasks"].items():
        files["tasks"][task] = {
            "adapter": [
                served(p, f"malora_tiny_{task}_adapter_{j}") for j, p in enumerate(t["adapter"])
            ],
            "test": [served(p, f"malora_tiny_{task}_test_{j}") for j, p in enumerate(t["test"])],
            "rows": t["rows"],
            "holdout": dict(t["holdout"]),
            "templates": t["templates"],
        }
        if "indices" in t["holdout"]:  # KnOTS's shuffled test indices, a download too
            files["tasks"][task]["holdout"]["indices"] = served(
                t["holdout"]["indices"], f"malora_tiny_{task}_idxs"
            )
    nli_tasks = {}
    for task, t in nli["tasks"].items():
        nli_tasks[task] = {
            "adapter": [
                served(p, f"malora_tiny_nli_{task}_adapter_{j}") for j, p in enumerate(t["adapter"])
            ],
            "calibration": [served(t["calibration"][0], f"malora_tiny_nli_{task}_calib")],
            "columns": t["columns"],
            "labels": t["labels"],
        }
        if "holdout" in t:  # one labelled split: the same download for both
            nli_tasks[task]["test"] = nli_tasks[task]["calibration"]
            nli_tasks[task]["holdout"] = t["holdout"]
        else:
            nli_tasks[task]["test"] = [served(t["test"][0], f"malora_tiny_nli_{task}_test")]
    nli_backbone = {
        "kind": "nli",
        "model_dir": nli["model_dir"],
        "max_length": 32,
        "batch_size": 5,
        "resources": {"gpu": 0, "mem_mb": 3000, "runtime": 20},
        "tasks": nli_tasks,
    }
    for paper in config["papers"].values():  # the other papers stay configured, switched off
        paper["enabled"] = False
    config["papers"]["malora"] = {
        **P,
        "full_scale": {
            "seeds": [0, 1],
            "calibration_per_task": 6,
            # the largest per-example margin: untrained tiny adapters classify few images right
            "margin": {"stat": "quantile", "q": 1.0},
            "batch_size": 8,
            "methods": ["task_arithmetic", "malora"],
            "resources": {"merge": {"gpu": 0, "mem_mb": 2000, "runtime": 10}},
            "backbones": {"tiny": files, "tiny_nli": nli_backbone},
        },
    }
    path = tmp_path / "full.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _normalised(out, backbone, method, individual):
    runs = json.loads((out / f"malora/full/{backbone}/{method}.json").read_text())["runs"]
    return [  # an untrained tiny adapter may have a calibration margin ≤ 0: NaN + reason
        np.mean(np.array(r["task_accuracy"]) / individual["individual"])
        if "error" not in r
        else np.nan
        for r in runs
    ]


def test_full_scale_jobs_from_a_local_server(tmp_path, http_server):
    from repro.malora.nli_data import load_tokenizer

    root, base = http_server
    fixture = tiny_clip_fixture(tmp_path / "fixture")
    nli = tiny_nli_fixture(tmp_path / "nli")
    config = _full_config(root.parent, fixture, nli, base)
    snakemake(
        "--cores",
        "2",
        "--configfile",
        str(config),
        "--replace-workflow-config",
        "results/malora/full/summary.json",
        workdir=tmp_path / "run",
        timeout=900,
    )
    out = tmp_path / "run" / "results"
    summaries = json.loads((out / "malora/full/summary.json").read_text())
    summary = summaries["tiny"]
    assert summary["seeds"] == [0, 1] and summary["tasks"] == list(fixture["tasks"])
    individual = json.loads((out / "malora/full/tiny/individual.json").read_text())
    for method in ("task_arithmetic", "malora"):
        assert summary["methods"][method]["normalised_accuracy"]["per_seed"] == (
            pytest.approx(_normalised(out, "tiny", method, individual), nan_ok=True)
        )
    assert not np.isnan(_normalised(out, "tiny", "task_arithmetic", individual)).any()
    diff = summary["paired_vs_malora"]["task_arithmetic"]["normalised_accuracy"]
    assert diff["n"] == 2
    meta = json.loads((out / "malora/full/tiny/pixels/task0/meta.json").read_text())
    assert meta["knots_indices"] and meta["rows"] == 24  # both shards, KnOTS-style holdout
    assert len(meta["validation_rows"]) == 12 and not set(meta["validation_rows"]) & set(
        meta["test_rows"]
    )
    # the NLI backbone: downloaded splits → tokenised tasks → the same merge jobs and summary
    tokenizer = load_tokenizer(nli["model_dir"])
    three = json.loads((out / "malora/full/tiny_nli/data/three.json").read_text())
    frame = pd.read_parquet(nli["tasks"]["three"]["test"][0])
    frame = frame[frame.label >= 0]
    expected = tokenizer(frame.premise.tolist(), frame.hypothesis.tolist())["input_ids"]
    assert (
        three["test"]["input_ids"] == expected and three["test"]["labels"] == frame.label.tolist()
    )
    binary = json.loads((out / "malora/full/tiny_nli/data/binary.json").read_text())
    assert binary["classes"] == [0, 2] and len(binary["calibration"]["labels"]) == 12
    nli_summary = summaries["tiny_nli"]
    individual = json.loads((out / "malora/full/tiny_nli/individual.json").read_text())
    assert nli_summary["tasks"] == individual["tasks"] == ["binary", "three"]  # sorted YAML
    for method in ("task_arithmetic", "malora"):
        values = _normalised(out, "tiny_nli", method, individual)
        assert not np.isnan(values).any()
        assert nli_summary["methods"][method]["normalised_accuracy"]["per_seed"] == (
            pytest.approx(values)
        )
    diff = nli_summary["paired_vs_malora"]["task_arithmetic"]["normalised_accuracy"]
    malora = nli_summary["methods"]["malora"]["normalised_accuracy"]["per_seed"]
    ta = nli_summary["methods"]["task_arithmetic"]["normalised_accuracy"]["per_seed"]
    assert diff["mean"] == pytest.approx(np.mean(np.array(malora) - ta)) and diff["n"] == 2


def test_full_config_builds_its_dag(tmp_path):
    result = snakemake(
        "-n",
        "--configfile",
        str(ROOT / "config" / "full.yaml"),
        "--replace-workflow-config",
        "malora",
        "results/malora/full/summary.json",
        workdir=tmp_path,
        timeout=300,
    )
    full = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())["papers"]["malora"]
    merges = len(full["full_scale"]["backbones"]) * len(full["full_scale"]["methods"])
    jobs = [line.split() for line in result.stdout.splitlines()]
    counts = {row[0]: int(row[1]) for row in jobs if len(row) == 2 and row[1].isdigit()}
    assert counts["malora_full_merge"] == merges
    assert counts["malora_full_individual"] == len(full["full_scale"]["backbones"])
    nli = [b for b in full["full_scale"]["backbones"].values() if b.get("kind") == "nli"]
    assert counts["malora_full_tokenise"] == sum(len(b["tasks"]) for b in nli) == 6
    clip = [b for b in full["full_scale"]["backbones"].values() if b.get("kind") != "nli"]
    assert counts["malora_full_pixels"] == sum(len(b["tasks"]) for b in clip) == 16


def _split_config(tmp_path, root, base):
    """The full-scale config of one tiny CLIP backbone (its fixture, config and backbones)."""
    fixture = tiny_clip_fixture(tmp_path / "fixture")
    path = _full_config(root.parent, fixture, {"tasks": {}, "model_dir": "unused"}, base)
    config = yaml.safe_load(path.read_text())
    backbones = config["papers"]["malora"]["full_scale"]["backbones"]
    del backbones["tiny_nli"]
    return fixture, path, config, backbones


def test_pixels_read_every_shard_the_hub_lists(tmp_path, http_server, http_requests):
    """A test split given as the dataset viewer's parquet listing (parquet_split: true): the
    download fetches the two shards it lists, locks each, and the pixels job reads both."""
    import pyarrow.parquet as pq

    root, base = http_server
    fixture, path, config, backbones = _split_config(tmp_path, root, base)
    listed = []
    for i, shard in enumerate(fixture["tasks"]["task0"]["test"]):
        (root / "split").mkdir(exist_ok=True)
        shutil.copy(shard, root / "split" / f"{i:04d}.parquet")
        url = f"{base}/split/{i:04d}.parquet"
        listed.append({"dataset": "x/y", "config": "default", "split": "test", "url": url,
                       "filename": f"{i:04d}.parquet", "size": 0})  # fmt: skip
    (root / "parquet").write_text(json.dumps({"parquet_files": listed[::-1], "partial": False}))
    listing = f"{base}/parquet?dataset=x/y&config=default&split=test"
    config["downloads"]["tiny_split"] = {"url": listing, "sha256": None, "parquet_split": True}
    backbones["tiny"]["tasks"]["task0"]["test"] = ["tiny_split"]
    path.write_text(yaml.safe_dump(config))
    target = "results/malora/full/tiny/pixels/task0/meta.json"
    run = tmp_path / "run"
    snakemake("--cores", "1", target, "--configfile", str(path), "--replace-workflow-config",
              workdir=run, timeout=600)  # fmt: skip
    meta = json.loads((run / target).read_text())
    labels = np.concatenate(
        [pq.read_table(s).column("label").to_numpy() for s in fixture["tasks"]["task0"]["test"]]
    )
    assert meta["rows"] == 24 and len(labels) == 24  # both shards, in shard order
    assert meta["test_labels"] == labels[meta["test_rows"]].tolist()
    lock = yaml.safe_load((run / "config" / "downloads.lock.yaml").read_text())
    assert {k for k in lock if k.startswith("tiny_split/")} == {
        "tiny_split/0000.parquet",
        "tiny_split/0001.parquet",
    }
    assert sorted(r for r in http_requests if "/split/" in r) == [
        "GET /split/0000.parquet",
        "GET /split/0001.parquet",
    ]


def test_a_split_listing_without_an_address_stops_before_any_download(tmp_path, http_server):
    root, base = http_server
    _, path, config, backbones = _split_config(tmp_path, root, base)
    listing = "http://no-such-host.invalid/parquet?dataset=x/y&config=default&split=test"
    config["downloads"]["tiny_split"] = {"url": listing, "sha256": None, "parquet_split": True}
    backbones["tiny"]["tasks"]["task0"]["test"] = ["tiny_split"]
    path.write_text(yaml.safe_dump(config))
    run = tmp_path / "run"
    args = ("--cores", "1", "downloads", "--configfile", str(path), "--replace-workflow-config")
    result = snakemake(*args, workdir=run, check=False, timeout=300)
    message = result.stdout + result.stderr
    assert result.returncode != 0
    assert "1 parquet split(s) to fetch, but no address for no-such-host.invalid" in message
    assert not (run / "results" / "downloads").exists()
