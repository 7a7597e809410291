"""The download lock and the `downloads` target through real snakemake runs, from a local
HTTP server; and the target's DAG on config/full.yaml."""

from __future__ import annotations

import hashlib

import pytest
import yaml

from repro.common.downloadlock import LockEntry, read_lock, record
from repro.common.downloadplan import referenced_downloads
from tests.conftest import ROOT, snakemake
from tests.workflow.test_download_rule import _config

pytestmark = pytest.mark.workflow
RAW = "results/downloads/metabric/metabric.h5"


def _lock_config(tmp_path, url, **top):
    path = _config(tmp_path, url, None)
    config = yaml.safe_load(path.read_text()) | top
    path.write_text(yaml.safe_dump(config))
    return path


def _downloads(tmp_path, config, check=True):
    result = snakemake(
        "--cores", "2", "downloads", "--configfile", str(config), workdir=tmp_path,
        timeout=300, check=check,
    )  # fmt: skip
    return result, result.stdout + result.stderr


def test_first_run_locks_a_changed_file_fails_the_next(tmp_path, http_server, http_requests):
    root, base = http_server
    (root / "metabric.h5").write_bytes(b"first copy" * 300)
    lock = tmp_path / "repo" / "full.lock.yaml"
    config = _lock_config(tmp_path, f"{base}/metabric.h5", downloads_lock_file=str(lock))
    _, out = _downloads(tmp_path, config)
    assert "downloads: 1 file(s) to fetch, 3.0 kB in total" in out  # before the download
    digest = hashlib.sha256(b"first copy" * 300).hexdigest()
    assert read_lock(lock) == {"metabric": LockEntry(f"{base}/metabric.h5", digest, 3000)}
    locked = lock.read_bytes()

    (root / "metabric.h5").write_bytes(b"other copy" * 300)  # the server's file changed
    (tmp_path / RAW).unlink()
    http_requests.clear()
    result, out = _downloads(tmp_path, config, check=False)
    assert result.returncode != 0
    # a lock mismatch is final: fetched once, neither retried by the helper nor by the rule
    assert [r for r in http_requests if r.startswith("GET")] == ["GET /metabric.h5"]
    log = (tmp_path / "logs/downloads/metabric/metabric.h5.log").read_text()
    for text in (out, log):
        assert f"downloads.metabric: the file at {base}/metabric.h5 is not the one locked" in text
    assert not (tmp_path / RAW).exists() and lock.read_bytes() == locked


def test_strict_mode_refuses_an_unlocked_entry_before_any_download(tmp_path, http_server):
    root, base = http_server
    (root / "metabric.h5").write_bytes(b"data" * 100)
    lock = tmp_path / "lock.yaml"
    url = f"{base}/metabric.h5"
    config = _lock_config(tmp_path, url, downloads_lock="strict", downloads_lock_file=str(lock))
    result, out = _downloads(tmp_path, config, check=False)
    assert result.returncode != 0
    assert "downloads.metabric: downloads_lock is strict" in out
    assert not (tmp_path / RAW).exists()
    record(lock, "metabric", LockEntry(url, hashlib.sha256(b"data" * 100).hexdigest(), 400))
    _downloads(tmp_path, config)  # once locked, strict mode fetches it
    assert (tmp_path / RAW).read_bytes() == b"data" * 100


def test_downloads_target_fetches_what_the_papers_name_and_nothing_else(tmp_path):
    """On config/full.yaml every entry is named by a paper (and test_config_and_dag checks
    that the whole DAG downloads each): the target asks for exactly those files."""
    full = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())
    assert referenced_downloads(full) == sorted(full["downloads"])
    result = snakemake(
        "-n", "downloads", "--configfile", str(ROOT / "config" / "full.yaml"), workdir=tmp_path,
        timeout=300,
    )  # fmt: skip
    table = result.stdout.split("Job stats:")[1].split("\n\n")[0].splitlines()[3:]
    counts = {line.split()[0]: int(line.split()[1]) for line in table}
    pinned = sum(1 for spec in full["downloads"].values() if spec["sha256"])
    splits = sum(1 for spec in full["downloads"].values() if spec.get("parquet_split"))
    assert counts == {
        "download_dataset": pinned,
        "download_parquet_split": splits,
        "download_unverified": len(full["downloads"]) - pinned - splits,
        "downloads": 1,
        "total": len(full["downloads"]) + 1,
    }
