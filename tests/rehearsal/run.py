"""The full-scale rehearsal: config/full.yaml with config/overlays/rehearsal.yaml, every
download served from 127.0.0.1 as a stand-in in the real format, run on the CPU from the
download jobs to results/claims.md and the report (``make rehearsal``).

    python -m tests.rehearsal.run [--workdir rehearsal] [--cores 2] [TARGET ...]

Steps: write the stand-ins of every download an enabled paper names (tests/rehearsal/
standins.py) under WORKDIR/www; serve them on a free port of 127.0.0.1; write WORKDIR/site.yaml
(each entry's URL on that server; the stand-in's sha256 where full.yaml pins one) and the
rehearsal lock WORKDIR/rehearsal.lock.yaml (the sha256 of the others, checked in strict mode);
run snakemake in WORKDIR, then its report; write WORKDIR/record.json (the jobs each rule ran,
read back from snakemake's summary) for scripts/readiness_table.py; stop the server.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import yaml

from repro.common.downloadlock import LockEntry, record
from repro.common.downloadplan import referenced_downloads
from tests.rehearsal.standins import local_url, served_path, write_standins

ROOT = Path(__file__).resolve().parents[2]
FULL = ROOT / "config" / "full.yaml"
OVERLAY = ROOT / "config" / "overlays" / "rehearsal.yaml"
THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


class StandinHandler(http.server.SimpleHTTPRequestHandler):
    """Serves ``root/HOST/PATH[?QUERY]`` for ``/HOST/PATH[?QUERY]``: the query is part of the
    file name (the Hub's parquet listing differs only by its query)."""

    def translate_path(self, path):
        parts = urllib.parse.urlsplit(path)
        name = served_path(f"http://{parts.path.lstrip('/')}?{parts.query}".rstrip("?"))
        return os.path.join(self.directory, name)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(www: Path, port: int = 0):
    """An HTTP server on 127.0.0.1 (a free port by default) for the life of the block; yields
    its base URL."""
    handler = functools.partial(StandinHandler, directory=str(www))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def merged_config(papers=None) -> dict:
    """full.yaml with the overlay, merged as Snakemake merges config files (dicts key by key)."""

    def merge(base, over):
        for key, value in over.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                merge(base[key], value)
            else:
                base[key] = value
        return base

    config = merge(yaml.safe_load(FULL.read_text()), yaml.safe_load(OVERLAY.read_text()))
    return merge(config, enabled(papers)) if papers else config


def enabled(papers) -> dict:
    """The overlay that rehearses only ``papers`` (of config/full.yaml's)."""
    every = yaml.safe_load(FULL.read_text())["papers"]
    return {"papers": {p: {"enabled": p in papers} for p in every}}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_site(workdir: Path, base: str, papers=None) -> Path:
    """Stand-ins, the site overlay and the rehearsal lock for every download named by an
    enabled paper (``papers`` only, if given); returns the site overlay's path."""
    config = merged_config(papers)
    downloads = config["downloads"]
    names = referenced_downloads(config)
    written = write_standins(downloads, names, workdir / "www", base)
    lock = workdir / "rehearsal.lock.yaml"
    lock.unlink(missing_ok=True)
    site = {}
    for name, path in written.items():
        url = local_url(downloads[name]["url"], base)
        if isinstance(path, list):  # a split's listing: each shard is locked
            site[name] = {"url": url}
            for shard in path:
                entry = LockEntry(shard["url"], sha256(shard["path"]), shard["path"].stat().st_size)
                record(lock, f"{name}/{shard['filename']}", entry)
        elif downloads[name]["sha256"]:  # pinned in full.yaml: pinned to the stand-in here
            site[name] = {"url": url, "sha256": sha256(path)}
        else:
            site[name] = {"url": url}
            record(lock, name, LockEntry(url, sha256(path), path.stat().st_size))
    if config["papers"].get("malora", {}).get("enabled"):
        stage_gated_models(config, workdir)
    path = workdir / "site.yaml"
    config = {
        "downloads_lock_file": str(lock),
        "downloads": site,
        **(enabled(papers) if papers else {}),
    }
    path.write_text(yaml.safe_dump(config, sort_keys=True))
    return path


def stage_gated_models(config: dict, workdir: Path) -> None:
    """What a user does by hand for a gated model (a snapshot in ``model_dir``)."""
    from tests.rehearsal.malora_standins import stage_gated_model

    for backbone in config["papers"]["malora"]["full_scale"]["backbones"].values():
        if backbone.get("model_dir"):
            stage_gated_model(workdir / backbone["model_dir"])


def snakemake(
    workdir: Path, site: Path, *args: str, capture=True, check=True
) -> subprocess.CompletedProcess:
    command = [
        str(Path(sys.executable).parent / "snakemake"),
        *("-s", str(ROOT / "Snakefile"), "--directory", str(workdir)),
        *("--configfile", str(FULL), str(OVERLAY), str(site), "--replace-workflow-config"),
        *args,
    ]
    env = {**os.environ, **THREADS, "OMP_WAIT_POLICY": "passive"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        command, env=env, cwd=ROOT, check=check, text=True, capture_output=capture
    )


def outputs(summary: str) -> list[dict]:
    """Every output of the DAG in ``snakemake --summary`` (tab-separated: output_file, date,
    rule, log-file(s), status, plan): its path, rule and whether the file exists (a date)."""
    rows = [line.split("\t") for line in summary.splitlines()[1:]]
    return [
        {"output": row[0], "rule": row[2], "exists": row[1] != "-"} for row in rows if len(row) >= 5
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=ROOT / "rehearsal")
    parser.add_argument("--cores", default="2")
    parser.add_argument(
        "--papers", nargs="+", help="rehearse these papers (default: the overlay's)"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=0,
        help="the server's port (default: a free one); the same "
        "port as a stopped rehearsal's lets a rerun in its workdir keep the finished jobs",
    )
    parser.add_argument("targets", nargs="*")
    args = parser.parse_args(argv)
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "www").mkdir(exist_ok=True)
    with serving(workdir / "www", args.port) as base:
        site = write_site(workdir, base, args.papers)
        start = time.time(), os.times()
        # every job that can run does: one rehearsal lists every failure it can reach
        run = ("--cores", args.cores, "--keep-going", *args.targets)
        failed = snakemake(workdir, site, *run, capture=False, check=False).returncode
        if not failed:
            snakemake(workdir, site, "--report", "results/report.html")
        wall = time.time() - start[0]
        cpu = sum(os.times()[2:4]) - sum(start[1][2:4])  # the children's user + system
        summary = snakemake(workdir, site, "--summary", *args.targets).stdout
    record_file = workdir / "record.json"
    config = merged_config(args.papers)
    papers = [p for p, s in config["papers"].items() if s.get("enabled")]
    downloads = {  # which paper reads which download entry
        p: referenced_downloads(
            {"downloads": config["downloads"], "papers": {p: config["papers"][p]}}
        )
        for p in papers
    }
    facts = {"papers": papers, "downloads": downloads, "wall_s": wall, "cpu_s": cpu}
    facts["outputs"] = outputs(summary)
    record_file.write_text(json.dumps(facts, indent=1, sort_keys=True))
    made = sum(o["exists"] for o in facts["outputs"])
    print(
        f"rehearsal of {papers}: {made} of {len(facts['outputs'])} outputs made, {wall:.0f} s "
        f"wall, {cpu:.0f} s CPU; {record_file}" + (" (snakemake failed)" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
