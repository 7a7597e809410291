"""GPU smoke check: every paper's CUDA path once, in a few minutes on one GPU.

Eight steps, one per paper: the smallest CUDA training job of each paper's tiny config
(`config/test.yaml` with `device: cuda`, one Snakemake run for all seven that have one; SBD's
is its evaluation, which times the factorised SpMM against cuSPARSE CSR), MaLoRA's full-scale
merge job on a tiny CLIP with KnOTS-format adapters, δ-Mem's chunkwise scan on CUDA at the
GPU test's chunk size (64) against the CPU default (16), and the `@pytest.mark.gpu` tests.
Prints one line per paper (`ok ...` or `failed: <error>`); everything lands under OUT
(default results/gpu_smoke). Run through `bash benchmarks/gpu_smoke.sh [--dry-run] [OUT]`;
`--dry-run` lists the steps and checks, without a GPU, that every target and entry point
exists (`snakemake -n` on the targets, imports of the Python steps).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]  # this checkout's code, and tests/ for a fixture
BUDGET_S = 450  # the whole check, under 8 minutes with start-up
GPU_TESTS = [
    "tests/qsurv/test_gpu.py",
    "tests/delta_mem/test_scan.py",
    "tests/r3_adapter/test_gpu.py",
]


@dataclass(frozen=True)
class Step:
    paper: str
    what: str
    target: str | None = None  # a config/test.yaml output built on CUDA
    python: str | None = None  # a step of this file (--step NAME)
    tests: list[str] = field(default_factory=list)


STEPS = [
    Step(
        "qsurv",
        "Time-LoRA hazard network and the other methods of one data set, one training job",
        "results/qsurv/runs/loglogistic/part0",
        tests=GPU_TESTS[:1],
    ),
    Step(
        "plsa",
        "GNN training of every method (PLSA's reweighting among them) on one data set, one job",
        "results/plsa/runs/csbm_gss",
    ),
    Step(
        "sbd",
        "factorised SpMM timed against cuSPARSE CSR (sbd_evaluate)",
        "results/sbd/metrics/planted.json",
    ),
    Step(
        "delta_mem",
        "backbone + δ-Mem training job; scan at T 4096, r 8, chunk 64 vs 16",
        "results/delta_mem/runs/delta_mem/seed0.json",
        python="scan",
        tests=GPU_TESTS[1:2],
    ),
    Step(
        "helpful_only",
        "TRL SFT + RLOO on the tiny Qwen2 models, one prior and seed",
        "results/helpful_only/runs/correlated/seed0.json",
    ),
    Step(
        "st_reliability",
        "State's ST model, one fold",
        "results/st_reliability/models/shared_program_strong/seed0/part0",
    ),
    Step(
        "malora",
        "full-scale merge jobs (individual, MaLoRA) on a tiny CLIP + KnOTS-format adapters",
        python="malora",
    ),
    Step(
        "r3_adapter",
        "DUSt3R-like backbone pretraining + one 3R-Adapter training job",
        "results/r3_adapter/runs/r3_lite.json",
        tests=GPU_TESTS[2:],
    ),
]


def _snakemake(out: Path, *args: str) -> list[str]:
    exe = Path(sys.executable).parent / "snakemake"
    targets = [s.target for s in STEPS if s.target]
    return [
        str(exe), "-s", str(ROOT / "Snakefile"), "--directory", str(out / "workflow"),
        "--configfile", str(ROOT / "config" / "test.yaml"), "--config", "device=cuda",
        *args, "--", *targets,
    ]  # fmt: skip


def step_scan(out: Path) -> dict:
    """The chunkwise scan on CUDA: equal to the float64 sequential reference at T 512, and
    timed (CUDA events, median of 20) at T 4096, r 8 for chunk sizes 16 and 64."""
    import torch

    from repro.delta_mem.scan import delta_rule_scan, delta_rule_scan_naive

    gen = torch.Generator().manual_seed(0)

    def inputs(T):
        q, k = (
            torch.nn.functional.normalize(torch.randn(1, T, 8, generator=gen), dim=-1) for _ in "qk"
        )
        return q, k, torch.randn(1, T, 8, generator=gen), torch.rand(1, T, 8, generator=gen)

    small = inputs(512)
    ref = delta_rule_scan_naive(*(t.double() for t in small))[0]
    got = delta_rule_scan(*(t.cuda() for t in small), chunk_size=64)[0]
    err = (got.double().cpu() - ref).abs().max().item() / max(1.0, ref.abs().max().item())
    times = {}
    big = [t.cuda() for t in inputs(4096)]
    for chunk in (16, 64):
        runs = []
        for _ in range(25):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            delta_rule_scan(*big, chunk_size=chunk)
            end.record()
            torch.cuda.synchronize()
            runs.append(start.elapsed_time(end))
        times[chunk] = sorted(runs[5:])[len(runs[5:]) // 2]
    ok = err < 2e-4
    detail = f"scan relative error {err:.1e}; T 4096: " + ", ".join(
        f"chunk {c} {ms:.2f} ms" for c, ms in times.items()
    )
    return {"ok": ok, "detail": detail if ok else f"scan error {err:.1e} > 2e-4; {detail}"}


def step_malora(out: Path) -> dict:
    """MaLoRA's full-scale jobs (normalisers, then the MaLoRA merge) on CUDA."""
    from repro.common.io import read_json
    from repro.malora.steps import full_step
    from tests.malora.malora_helpers import tiny_clip_fixture

    fixture = tiny_clip_fixture(out / "malora" / "fixture")
    tasks = {
        k: {kk: v for kk, v in t.items() if kk != "peft_model"} for k, t in fixture["tasks"].items()
    }
    files = {"model": fixture["model"], "tasks": tasks}
    settings = {
        "seeds": [0],
        "calibration_per_task": 6,
        "margin": {"stat": "softmin"},
        "batch_size": 5,
    }
    rules = {"methods": {"malora": {"rule": "malora"}}, "scale_grid": [0.5, 1.0]}
    individual = out / "malora" / "individual.json"
    full_step(files, settings, rules, "cuda", individual)
    merged = out / "malora" / "malora.json"
    full_step(files, settings, rules, "cuda", merged, method="malora", individual=individual)
    device = read_json(merged)["provenance"]["device"]
    return {"ok": device.startswith("cuda"), "detail": f"individual + malora merge on {device}"}


PYTHON_STEPS = {"scan": step_scan, "malora": step_malora}


def _last_error(paths) -> str:
    for path in sorted(paths, key=lambda p: p.stat().st_mtime, reverse=True):
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
        hits = [ln for ln in lines if re.search(r"Error|Exception|error:", ln)]
        if hits:
            return f"{hits[-1][:300]} ({path.name})"
    return ""


def _workflow_status(step: Step, out: Path, returncode: int | None) -> tuple[bool, str]:
    work = out / "workflow"
    logs = (
        [p for p in (work / "logs" / step.paper).rglob("*.log")] if (work / "logs").exists() else []
    )
    if not (work / step.target).exists():
        why = "timed out" if returncode is None else _last_error(logs) or "no output"
        return False, f"{step.target} not built: {why}"
    made = (
        [work / step.target]
        if (work / step.target).is_file()
        else list((work / step.target).rglob("*"))
    )
    texts = [
        p.read_text(errors="replace")
        for p in [*made, *logs]
        if p.is_file() and p.suffix in (".json", ".log")
    ]
    if not any(re.search(r"cuda", t) for t in texts):
        return False, f"{step.target} built, but neither it nor its logs name a CUDA device"
    return True, f"{step.target} on CUDA"


def _test_status(step: Step, junit: Path) -> tuple[bool, str]:
    if not step.tests:
        return True, ""
    if not junit.exists():
        return False, "GPU tests did not run"
    modules = {t.removesuffix(".py").replace("/", ".") for t in step.tests}
    cases = [
        c
        for c in ET.parse(junit).iter("testcase")
        if any(c.get("classname", "").startswith(m) for m in modules)
    ]
    bad = [
        c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None
    ]
    skipped = [c for c in cases if c.find("skipped") is not None]
    if bad:
        return False, f"GPU tests failed: {', '.join(bad)}"
    if not cases or len(skipped) == len(cases):
        return False, "GPU tests skipped"
    return True, f"{len(cases) - len(skipped)} GPU tests passed"


def dry_run(out: Path) -> int:
    print(f"gpu_smoke: {len(STEPS)} steps, outputs under {out}")
    for i, s in enumerate(STEPS, 1):
        parts = [
            s.target and f"target {s.target}",
            s.python and f"python step {s.python}",
            s.tests and f"tests {' '.join(s.tests)}",
        ]
        print(f"  {i}. {s.paper}: {s.what} [{'; '.join(p for p in parts if p)}]")
    out.mkdir(parents=True, exist_ok=True)
    command = _snakemake(out, "-n", "--quiet", "rules")
    check = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if check.returncode != 0:
        print(f"dry run: the targets do not resolve:\n{check.stderr[-3000:]}")
        return 1
    from repro.delta_mem.scan import delta_rule_scan  # noqa: F401
    from repro.malora.steps import full_step  # noqa: F401
    from tests.malora.malora_helpers import tiny_clip_fixture  # noqa: F401

    print("dry run: every target resolves (snakemake -n) and every Python step imports")
    return 0


def run(out: Path, cores: str) -> int:
    import torch

    if not torch.cuda.is_available():
        print("gpu_smoke: no CUDA device visible")
        return 2
    print(f"device: {torch.cuda.get_device_name(0)} | torch {torch.__version__}", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    logs = {}

    def launch(name, cmd):
        logs[name] = open(out / f"{name}.log", "w")  # noqa: SIM115 (closed below)
        return subprocess.Popen(cmd, stdout=logs[name], stderr=subprocess.STDOUT, cwd=ROOT)

    procs = {
        "snakemake": launch(
            "snakemake", _snakemake(out, "--cores", cores, "--resources", "gpu=8", "--keep-going")
        ),
        "pytest": launch(
            "pytest",
            [
                sys.executable,
                "-m",
                "pytest",
                "-m",
                "gpu",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--junitxml={out / 'gpu_tests.xml'}",
                *GPU_TESTS,
            ],
        ),  # fmt: skip
    }
    for name in PYTHON_STEPS:
        procs[name] = launch(name, [sys.executable, __file__, "--step", name, str(out)])
    codes = {}
    for name, proc in procs.items():
        try:
            codes[name] = proc.wait(timeout=max(1, BUDGET_S - (time.monotonic() - start)))
        except subprocess.TimeoutExpired:
            proc.kill()
            codes[name] = None
        logs[name].close()
    failed = 0
    for s in STEPS:
        parts = []
        if s.target:
            parts.append(_workflow_status(s, out, codes["snakemake"]))
        if s.python:
            result = out / f"{s.python}.json"
            if result.exists():
                r = json.loads(result.read_text())
                parts.append((r["ok"], r["detail"]))
            else:
                why = (
                    "timed out"
                    if codes[s.python] is None
                    else _last_error([out / f"{s.python}.log"])
                )
                parts.append((False, f"{s.python} step failed: {why or 'no result'}"))
        parts.append(_test_status(s, out / "gpu_tests.xml"))
        ok = all(p[0] for p in parts)
        failed += not ok
        detail = "; ".join(p[1] for p in parts if p[1] and (ok or not p[0]))
        print(f"{s.paper}: {'ok' if ok else 'failed'}: {detail}", flush=True)
    print(
        f"gpu_smoke: {len(STEPS) - failed} of {len(STEPS)} ok in "
        f"{time.monotonic() - start:.0f} s; outputs under {out}"
    )
    return 1 if failed else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", nargs="?", default=str(ROOT / "results" / "gpu_smoke"))
    p.add_argument("--dry-run", action="store_true", help="list the steps and check the targets")
    p.add_argument("--cores", default="all")
    p.add_argument("--step", choices=sorted(PYTHON_STEPS), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    out = Path(args.out).resolve()
    if args.step:
        result = PYTHON_STEPS[args.step](out)
        (out / f"{args.step}.json").write_text(json.dumps(result))
        return 0
    return dry_run(out) if args.dry_run else run(out, args.cores)


if __name__ == "__main__":
    sys.exit(main())
