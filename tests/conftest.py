"""Shared helpers: run the real snakemake of this venv on this workflow."""

from __future__ import annotations

import gc
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
# One thread per process: on 2 cores, oversubscription makes small tensors ~100x slower.
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "OMP_WAIT_POLICY": "passive",
}


def pytest_collection_finish(session):
    # Collection imported the libraries (torch, transformers, scanpy, PyG ...): frozen, they
    # are skipped by the full collections during the tests (gen-2 CPU 5.5 -> 3.3 s over
    # tests/r3_adapter and tests/sbd, measured with a gc callback).
    gc.freeze()


def snakemake_command(*args: str, workdir: Path) -> list[str]:
    return [SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "--directory", str(workdir), *args]


def snakemake_env(extra: dict | None = None) -> dict[str, str]:
    """This venv first on PATH (cluster jobs start snakemake from PATH), one thread per job."""
    path = f"{Path(SNAKEMAKE).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, **THREAD_ENV, **(extra or {})}


def snakemake(
    *args: str, workdir: Path, timeout: float = 900, env: dict | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    """Run ``snakemake -s ROOT/Snakefile --directory WORKDIR ARGS`` and return the result."""
    result = subprocess.run(
        snakemake_command(*args, workdir=workdir),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=snakemake_env(env),
        cwd=ROOT,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed ({result.returncode}):\n{result.stderr[-6000:]}")
    return result


@pytest.fixture(autouse=True)
def _dev_null_stays_a_device():
    """A test that writes a file atomically to /dev/null renames a regular file over it, and
    every later test that discards output through it (the SLURM cluster's fake GPU among
    them) fails in ways that point elsewhere: the test that did it fails instead."""
    yield
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode), f"this test replaced {os.devnull}"


@pytest.fixture(scope="session")
def test_config() -> Path:
    return ROOT / "config" / "test.yaml"


class _QuietHandler(__import__("http.server").server.SimpleHTTPRequestHandler):
    def __init__(self, *args, requests, **kwargs):
        self.requests = requests
        super().__init__(*args, **kwargs)

    def send_head(self):  # GET and HEAD
        self.requests.append(f"{self.command} {self.path}")
        return super().send_head()

    def log_message(self, *args):
        pass


@pytest.fixture
def http_requests() -> list[str]:
    """What ``http_server`` was asked for, in order: "GET /path", "HEAD /path"."""
    return []


@pytest.fixture
def http_server(tmp_path, http_requests):
    """A real HTTP server on 127.0.0.1 serving ``tmp_path/www``; yields (root, base_url)."""
    import functools
    import http.server
    import threading

    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root), requests=http_requests)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def test_run(tmp_path_factory, test_config) -> Path:
    """The whole DAG of config/test.yaml, run once per session; returns its results/ folder.

    Under pytest-xdist every worker has its own session, so the run lives in the folder the
    workers share (the parent of each one's basetemp): the first worker to ask runs it under
    a file lock, the other waits for it and reads the same outputs."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    workdir = shared / "test_config_run"
    with FileLock(str(shared / "test_config_run.lock")):
        if not (workdir / "finished").exists():
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.mkdir()
            snakemake("--cores", "2", "--configfile", str(test_config), workdir=workdir)
            (workdir / "finished").touch()
    return workdir / "results"


def set_dotted(config: dict, path: str, value) -> dict:
    """Set ``config["a"]["b"]["c"] = value`` for the path "a.b.c", in place; returns config."""
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node[key]
    node[last] = value
    return config


def assert_claims_report_lists(results: Path, paper: str, claims: dict) -> None:
    """results/claims.md has the paper's section (under its title) with every claim and
    check, and as many reproduced verdicts as the paper's claims.json (checks say passed)."""
    import importlib

    title = importlib.import_module(f"repro.{paper}").TITLE
    section = (results / "claims.md").read_text().split(f"## {title}\n")[1].split("\n## ")[0]
    for claim in claims.values():
        assert claim["claim"].replace("|", "\\|") in section
    reproduced = sum(
        c["verdict"] == "reproduced" and c.get("type", "claim") == "claim" for c in claims.values()
    )
    assert section.count("**reproduced**") == reproduced


# Asks each step for its --help in one fresh interpreter, run as __main__ the way
# ``python -m`` runs it (so a step whose import breaks, or that lacks its __main__ guard, fails).
_HELP_PROBE = """
import contextlib, io, json, runpy, sys
paper, answers = sys.argv[1], {}
for step in json.loads(sys.argv[2]):
    module, *subcommand = step.split()
    sys.argv, out, code = [module, *subcommand, "--help"], io.StringIO(), "no exit"
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_module(f"repro.{paper}.{module}", run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = stop.code
    except Exception as error:
        code = repr(error)
    answers[step] = {"code": code, "usage": out.getvalue()}
print(json.dumps(answers))
"""


def assert_steps_answer_help(paper: str, steps: Sequence[str]) -> dict[str, str]:
    """Every step answers ``python -m repro.<paper>.<module> [<subcommand>] --help`` (a step is
    "module" or "module subcommand") with exit status 0 and its usage on stdout; returns
    {step: usage text} for the paper's own checks of what the usage says."""
    done = subprocess.run(
        [sys.executable, "-c", _HELP_PROBE, paper, json.dumps(list(steps))],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, **THREAD_ENV},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answers = json.loads(done.stdout.splitlines()[-1])
    broken = {
        step: f"exit {a['code']}: {a['usage'][:300]!r}"
        for step, a in answers.items()
        if a["code"] != 0 or not a["usage"].startswith("usage:")
    }
    assert not broken, f"steps of {paper} that do not answer --help: {broken}"
    return {step: a["usage"] for step, a in answers.items()}
