"""The config is validated before any job starts; lint, format and the full-scale DAG."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, set_dotted, snakemake

pytestmark = pytest.mark.workflow

TEST_CONFIG = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())


def _dry_run_with(tmp_path: Path, mutate) -> subprocess.CompletedProcess:
    config = copy.deepcopy(TEST_CONFIG)
    mutate(config)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    return snakemake(
        "-n",
        "--configfile",
        str(path),
        "--replace-workflow-config",
        workdir=tmp_path,
        check=False,
        timeout=120,
    )


def _set(path: str, value):
    return lambda config: set_dotted(config, path, value)


@pytest.mark.parametrize(
    ("mutate", "names"),
    [
        (_set("papers.qsurv.trainig", {"epochs": 3}), ["trainig"]),
        (_set("papers.qsurv.training.epochs", "ten"), ["epochs", "ten"]),
        (_set("papers.qsurv.training.epochs", -5), ["epochs", "-5"]),
        (_set("papers.qsurv.real_datasets", {"metabrik": {"source": "bundled"}}), ["metabrik"]),
        (_set("papers.qsurv.real_methods", ["qsurv", "deepsurv"]), ["real_methods", "deepsurv"]),
        (
            _set(
                "papers.qsurv.real_datasets",
                {"metabric": {"source": "deepsurv_h5", "download": "metabric"}},
            ),
            ["metabric", "downloads"],
        ),
        (_set("device", "tpu"), ["device", "tpu"]),
        (_set("devcie", "cpu"), ["devcie: unknown key", "device, downloads"]),
        (
            _set("papers.plsa.end_to_end.training.epocs", 3),
            ["papers.plsa.end_to_end.training.epocs: unknown key", "epochs, hidden"],
        ),
        (_set("papers.qsurf", {"enabled": True}), ["papers.qsurf"]),
        (
            _set("papers.qsurv.claims.competitive_ctd_gbsg2.dataset", "gbsg"),
            ["papers.qsurv.claims.competitive_ctd_gbsg2.dataset", "gbsg"],
        ),
        (
            _set("papers.qsurv.claims.competitive_ctd_gbsg2.metric", "cindex"),
            ["papers.qsurv.claims.competitive_ctd_gbsg2.metric", "cindex"],
        ),
        (
            _set("papers.qsurv.claims.competitive_ctd_gbsg2.baselines", ["cox_ph"]),
            ["papers.qsurv.claims.competitive_ctd_gbsg2.baselines", "cox_ph"],
        ),
        (
            _set("papers.qsurv.claims.gl_converges_faster.nodes", 7),
            ["papers.qsurv.claims.gl_converges_faster.nodes", "7"],
        ),
        (
            _set("papers.plsa.claims.plsa_improves_over_erm_gss.method", "plsaa"),
            ["papers.plsa.claims.plsa_improves_over_erm_gss.method", "plsaa"],
        ),
        (
            _set("papers.sbd.claims.compression_planted.dataset", "plantd"),
            ["papers.sbd.claims.compression_planted.dataset", "plantd"],
        ),
        (
            _set("papers.delta_mem.claims.memory_only_gain.kind", "state_gian"),
            ["papers.delta_mem.claims.memory_only_gain.kind", "state_gian"],
        ),
    ],
    ids=[
        "unknown-key",
        "wrong-type",
        "negative-epochs",
        "unknown-dataset",
        "unknown-method",
        "missing-download",
        "bad-device",
        "unknown-top-level-key",
        "unknown-nested-key",
        "unknown-paper",
        "claim-dataset-typo",
        "claim-metric-typo",
        "claim-baseline-typo",
        "claim-nodes-typo",
        "claim-method-typo",
        "claim-dataset-typo-sbd",
        "claim-kind-typo",
    ],
)
def test_bad_config_stops_before_any_job_naming_the_key(tmp_path, mutate, names):
    result = _dry_run_with(tmp_path, mutate)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    for name in names:
        assert name in message, message[-3000:]
    # a few lines a person reads, naming the config file, not the whole config and schema
    assert len(message.strip().splitlines()) <= 15, message[-3000:]
    assert str(tmp_path / "bad.yaml") in message
    assert "Building DAG of jobs" not in message or "Job stats" not in message
    assert not (tmp_path / "results").exists()


def test_lint_and_format_are_clean():
    lint = subprocess.run(
        [str(Path(sys.executable).parent / "snakemake"), "--lint"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert lint.returncode == 0, lint.stdout[-3000:] + lint.stderr[-3000:]
    fmt = subprocess.run(
        [str(Path(sys.executable).parent / "snakefmt"), "--check", "Snakefile", "rules"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


@pytest.mark.parametrize("target", ["plsaa", "PLSA"])
def test_an_unknown_target_lists_the_papers(tmp_path, target):
    result = snakemake("-n", target, workdir=tmp_path, check=False, timeout=120)
    message = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"'{target}' is not a target of this workflow" in message, message[-3000:]
    assert all(paper in message for paper in TEST_CONFIG["papers"]), message[-3000:]


def _jobs(dry_run_output: str) -> list[tuple[str, list[str], list[str]]]:
    """(rule, inputs, outputs) of every job a dry run lists."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", dry_run_output):
        if match := re.match(r"(?:local)?rule (\w+):", block):
            fields = dict(re.findall(r"^    (\w+): (.*)$", block, re.M))
            files = {k: fields.get(k, "").split(", ") for k in ("input", "output")}
            jobs.append((match.group(1), files["input"], files["output"]))
    return jobs


def test_full_scale_dag_builds(tmp_path):
    result = snakemake(
        "-n", "--configfile", str(ROOT / "config" / "full.yaml"), workdir=tmp_path, timeout=120
    )
    # the default target asks for every file a job makes, so that one deleted or lost to an
    # interruption is rebuilt (Snakemake rebuilds only what a target or a rerun job asks for)
    jobs = _jobs(result.stdout)
    (requested,) = [inputs for rule, inputs, _ in jobs if rule == "all"]
    made = {f for rule, _, outputs in jobs if rule != "all" for f in outputs}
    assert made and made <= set(requested), sorted(made - set(requested))[:20]
    counts = {}
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    full = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())
    # a split listed by the Hub (parquet_split) is one job fetching every shard it lists
    files = {n: s for n, s in full["downloads"].items() if not s.get("parquet_split")}
    pinned = sum(1 for spec in files.values() if spec["sha256"])
    assert counts["download_dataset"] == pinned
    assert counts["download_unverified"] == len(files) - pinned
    assert counts["download_parquet_split"] == len(full["downloads"]) - len(files)
    q = full["papers"]["qsurv"]
    # methods_per_job: 1, one GPU job per (data set, method)
    assert q["methods_per_job"] == 1
    assert counts["qsurv_train"] == len(q["synthetic"]["scenarios"]) * len(
        q["synthetic_methods"]
    ) + len(q["real_datasets"]) * len(q["real_methods"])
    e2e = full["papers"]["plsa"]["end_to_end"]
    assert counts["plsa_train"] == len(e2e["datasets"])  # one job trains every method
    se = full["papers"]["st_reliability"]["se600m"]
    assert counts["st_reliability_se_embed"] == len(se["datasets"])  # SE-600M, one job each


def test_full_scale_se600m_model_trains_on_the_se_embed_step(tmp_path):
    """The training job of a model with encoder se600m needs the data set's SE-600M
    embeddings (se_embed → train); an HVG model's job does not."""
    full = ROOT / "config" / "full.yaml"
    paper = yaml.safe_load(full.read_text())["papers"]["st_reliability"]
    models = paper["datasets"]["crispri_four_lines"]["models"]

    def jobs(model):
        part = models.index(model) // paper["train_batch"]
        target = f"results/st_reliability/models/crispri_four_lines/seed0/part{part}"
        workdir = tmp_path / model
        workdir.mkdir()
        result = snakemake("-n", target, "--configfile", str(full), workdir=workdir, timeout=120)
        rows = (line.split() for line in result.stdout.splitlines())
        return {r[0]: int(r[1]) for r in rows if len(r) == 2 and r[1].isdigit()}

    assert paper["models"]["se600m"]["encoder"] == "se600m"
    se = jobs("se600m")
    assert se["st_reliability_train"] == 1 and se["st_reliability_se_embed"] == 1
    hvg = jobs("hvg")
    assert hvg["st_reliability_train"] == 1 and "st_reliability_se_embed" not in hvg


@pytest.mark.parametrize("missing", sorted(TEST_CONFIG["papers"]))
def test_a_config_without_a_paper_builds_without_its_jobs(tmp_path, missing):
    """Papers slot in and out: an absent paper defaults to disabled with its defaults, its
    rules still parse, and every other paper's jobs are still there."""
    config = copy.deepcopy(TEST_CONFIG)
    del config["papers"][missing]
    path = tmp_path / "one_paper_less.yaml"
    path.write_text(yaml.safe_dump(config))
    result = snakemake("-n", "--configfile", str(path), workdir=tmp_path, timeout=180)
    jobs, _ = _jobs_and_outputs(result)
    assert not any(job.startswith(f"{missing}_") for job in jobs)
    for other in config["papers"]:
        assert f"{other}_claims" in jobs, other


def _jobs_and_outputs(result: subprocess.CompletedProcess) -> tuple[set[str], str]:
    jobs = {
        line.split()[0]
        for line in result.stdout.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }
    return jobs, result.stdout


def test_papers_may_share_data_set_and_method_names(tmp_path):
    """Wildcards are per paper: a data set `shared` in PLSA and SBD and a method `lora` in
    QSurv and δ-Mem build one DAG, each paper's jobs with its own rules."""
    config = copy.deepcopy(TEST_CONFIG)
    papers = config["papers"]
    papers["plsa"]["end_to_end"]["datasets"]["shared"] = {"shift": "css", "n": 300, "sigma": 0.8}
    papers["sbd"]["datasets"]["shared"] = {
        "kind": "planted",
        "m": 80,
        "blocks": 2,
        "side_min": 5,
        "side_max": 10,
    }
    papers["qsurv"]["methods"]["lora"] = {"family": "neural_hazard", "nodes": 5}
    papers["qsurv"]["synthetic_methods"].append("lora")
    papers["delta_mem"]["methods"]["lora"] = {"kind": "lora", "rank": 2}
    path = tmp_path / "shared_names.yaml"
    path.write_text(yaml.safe_dump(config))
    result = snakemake("-n", "-p", "--configfile", str(path), workdir=tmp_path, timeout=120)
    _, stdout = _jobs_and_outputs(result)
    for output in (
        "results/plsa/data/shared.npz",
        "results/plsa/runs/shared",
        "results/sbd/data/shared.npz",
        "results/sbd/decompositions/shared/sbd.npz",
        "results/qsurv/runs/loglogistic/part0",
        "results/delta_mem/models/lora/seed0.pt",
    ):
        assert output in stdout, output
    # each output is made by its own paper's rule
    rules = {}
    rule = None
    for line in stdout.splitlines():
        if line.startswith(("rule ", "localrule ")):
            rule = line.split()[1].rstrip(":")
        elif line.strip().startswith("output:") and rule:
            for out in line.split(":", 1)[1].split(","):
                rules[out.strip()] = rule
    assert rules["results/plsa/data/shared.npz"] == "plsa_prepare"
    assert rules["results/sbd/data/shared.npz"] == "sbd_prepare"
    assert rules["results/qsurv/runs/loglogistic/part0"] == "qsurv_train"
    assert rules["results/delta_mem/models/lora/seed0.pt"] == "delta_mem_train"


def test_shared_files_name_no_paper():
    """A paper plugs in through its own files; the shared ones name it only in PAPERS."""
    common = (ROOT / "rules" / "common.smk").read_text()
    papers_line = next(line for line in common.splitlines() if line.startswith("PAPERS = "))
    shared = [ROOT / "rules" / "report.smk", ROOT / "rules" / "datasets.smk"]
    shared += [
        ROOT / "workflow" / "schemas" / f for f in ("config.schema.yaml", "defs.schema.yaml")
    ]
    shared += sorted((ROOT / "src" / "repro" / "common").glob("*.py"))
    texts = {path: path.read_text() for path in shared}
    texts[ROOT / "rules" / "common.smk"] = common.replace(papers_line, "")
    names = [p.strip("\" '") for p in papers_line.split("(", 1)[1].rstrip(")").split(",")]
    for path, text in texts.items():
        code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
        for name in filter(None, names):
            assert not re.search(rf"\b{name}\b", code), f"{path.name} names {name}"


@pytest.mark.parametrize("methods_per_job", [None, 1, 2])
def test_a_qsurv_training_job_gets_the_runtime_of_all_its_methods(tmp_path, methods_per_job):
    """`methods_per_job` cuts each data set's methods, in order, into training jobs (null:
    one job per data set); `resources.train.runtime` is per method and a job trains its
    methods in turn, so its wall-time limit (SLURM -t) is that times its methods. Each
    evaluation reads every training job of its data set."""
    config = copy.deepcopy(TEST_CONFIG)
    q = config["papers"]["qsurv"]
    if methods_per_job is not None:
        q["methods_per_job"] = methods_per_job
    path = tmp_path / "parts.yaml"
    path.write_text(yaml.safe_dump(config))
    dry = snakemake(
        "-n",
        "--configfile",
        str(path),
        "--replace-workflow-config",
        "results/qsurv/metrics/gbsg2.json",
        "results/qsurv/metrics/loglogistic.json",
        workdir=tmp_path,
    )
    jobs = {
        (m.group(1), int(m.group(2))): int(m.group(3))
        for m in re.finditer(
            r"rule qsurv_train:.*?wildcards: dataset=(\w+), part=(\d+)\n.*?runtime=(\d+)",
            dry.stdout,
            re.S,
        )
    }
    evaluated = {
        m.group(2): m.group(1).split(", ")[1:]
        for m in re.finditer(
            r"rule qsurv_evaluate:\n\s+input: (.*)\n(?:.*\n)*?\s+wildcards: dataset=(\w+)",
            dry.stdout,
        )
    }
    per_method = q["resources"]["train"]["runtime"]
    expected, dirs = {}, {}
    for dataset, methods in (
        ("gbsg2", q["real_methods"]),
        ("loglogistic", q["synthetic_methods"]),
    ):
        size = methods_per_job or len(methods)  # the parts, written out by hand
        sizes = [min(size, len(methods) - start) for start in range(0, len(methods), size)]
        expected.update({(dataset, k): per_method * n for k, n in enumerate(sizes)})
        dirs[dataset] = [f"results/qsurv/runs/{dataset}/part{k}" for k in range(len(sizes))]
    assert jobs == expected
    assert {d: sorted(inputs) for d, inputs in evaluated.items()} == {
        d: sorted(paths) for d, paths in dirs.items()
    }
    if methods_per_job is None:  # the embedded default: one job per data set
        assert sorted(jobs) == [("gbsg2", 0), ("loglogistic", 0)]
        assert jobs[("gbsg2", 0)] == per_method * len(q["real_methods"])


def test_the_quick_overlay_merges_over_the_default(tmp_path):
    """config/overlays/quick.yaml changes only what it names: fewer seeds, the default's
    data sets and methods kept (dicts merge key by key, lists replace)."""
    overlay = ROOT / "config" / "overlays" / "quick.yaml"
    default, quick = (
        yaml.safe_load(p.read_text()) for p in (ROOT / "config" / "config.yaml", overlay)
    )
    result = snakemake(
        "-n", "--configfile", "config/config.yaml", str(overlay.relative_to(ROOT)), workdir=tmp_path
    )
    counts = {
        r[0]: int(r[1])
        for r in map(str.split, result.stdout.splitlines())
        if len(r) == 2 and r[1].isdigit()
    }
    helpful = default["papers"]["helpful_only"]
    assert counts["helpful_only_train"] == len(helpful["priors"]) * len(
        quick["papers"]["helpful_only"]["seeds"]
    )
    assert counts["helpful_only_train"] < len(helpful["priors"]) * len(helpful["seeds"])
    assert counts["plsa_train"] == len(default["papers"]["plsa"]["end_to_end"]["datasets"])
    assert counts["delta_mem_backbone"] == len(quick["papers"]["delta_mem"]["seeds"])
    for paper in default["papers"]:
        assert counts[f"{paper}_claims"] == 1, paper
