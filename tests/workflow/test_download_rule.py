"""The download rule and a full-scale loader, through snakemake, from a local HTTP server."""

from __future__ import annotations

import copy
import hashlib

import h5py
import numpy as np
import pytest
import yaml

from repro.common.io import read_npz
from tests.conftest import ROOT, snakemake

pytestmark = pytest.mark.workflow

TEST_CONFIG = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
TARGET = "results/qsurv/data/metabric.npz"


def _deepsurv_fixture(path, rng):
    """A small file in the layout of DeepSurv's METABRIC HDF5 (train/test groups)."""
    with h5py.File(path, "w") as handle:
        for group, n in (("train", 60), ("test", 20)):
            g = handle.create_group(group)
            g["x"] = rng.normal(size=(n, 3)).astype(np.float32)
            g["t"] = rng.uniform(1, 100, size=n).astype(np.float32)
            g["e"] = (rng.uniform(size=n) < 0.6).astype(np.int32)


def _config(tmp_path, url, sha256):
    config = copy.deepcopy(TEST_CONFIG)
    config["downloads"] = {"metabric": {"url": url, "sha256": sha256}}
    q = config["papers"]["qsurv"]
    q["synthetic"]["scenarios"] = []
    q["real_datasets"] = {"metabric": {"source": "deepsurv_h5", "download": "metabric"}}
    # a claim naming a data set this config drops would be a config error (a typo)
    for kind in ("claims", "checks"):
        kept = {k: c for k, c in q.get(kind, {}).items() if c.get("dataset") in (None, "metabric")}
        q[kind] = kept
    path = tmp_path / "download.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_download_then_prepare_from_local_server(tmp_path, http_server):
    root, base = http_server
    _deepsurv_fixture(root / "metabric.h5", np.random.default_rng(0))
    digest = hashlib.sha256((root / "metabric.h5").read_bytes()).hexdigest()
    config = _config(tmp_path, f"{base}/metabric.h5", digest)
    snakemake(
        "--cores",
        "1",
        "--configfile",
        str(config),
        "--replace-workflow-config",
        TARGET,
        workdir=tmp_path,
        timeout=300,
    )
    raw = tmp_path / "results/downloads/metabric/metabric.h5"
    assert raw.read_bytes() == (root / "metabric.h5").read_bytes()
    with h5py.File(root / "metabric.h5") as handle:  # pooled train then test, as pycox does
        t = np.concatenate([handle["train"]["t"][:], handle["test"]["t"][:]])
    data = read_npz(tmp_path / TARGET)
    n_seeds = len(TEST_CONFIG["papers"]["qsurv"]["seeds"])
    assert data["x_train"].shape == (n_seeds, 48, 3)
    for i in range(n_seeds):
        np.testing.assert_allclose(data["t_test"][i], t[data["index_test"][i]])
        np.testing.assert_allclose(data["x_train"][i].mean(axis=0), 0, atol=1e-5)


def test_checksum_mismatch_fails_and_leaves_nothing(tmp_path, http_server):
    root, base = http_server
    _deepsurv_fixture(root / "metabric.h5", np.random.default_rng(1))
    config = _config(tmp_path, f"{base}/metabric.h5", "0" * 64)
    result = snakemake(
        "--cores",
        "1",
        "--configfile",
        str(config),
        "--replace-workflow-config",
        TARGET,
        workdir=tmp_path,
        timeout=300,
        check=False,
    )
    assert result.returncode != 0
    assert "checksum" in (result.stdout + result.stderr).lower()
    downloads = tmp_path / "results/downloads"
    assert not downloads.exists() or not any(p.is_file() for p in downloads.rglob("*"))
    assert not (tmp_path / TARGET).exists()


def test_unpinned_download_logs_the_digest_to_pin(tmp_path, http_server):
    """sha256: null goes through download_unverified, which logs what it saw."""
    root, base = http_server
    _deepsurv_fixture(root / "metabric.h5", np.random.default_rng(2))
    digest = hashlib.sha256((root / "metabric.h5").read_bytes()).hexdigest()
    config = _config(tmp_path, f"{base}/metabric.h5", None)
    snakemake("--cores", "1", TARGET, "--configfile", str(config), workdir=tmp_path, timeout=300)
    log = (tmp_path / "logs/downloads/metabric/metabric.h5.log").read_text()
    assert f"no sha256 pinned for {base}/metabric.h5; this copy has sha256 {digest}" in log
    assert (tmp_path / TARGET).exists()


def test_downloads_without_an_address_stop_once(tmp_path):
    """No network (or a host that does not exist): the run says so once and stops before
    any download job, instead of every job failing after its retries."""
    config = _config(tmp_path, "http://no-such-host.invalid/metabric.h5", None)
    args = ("--cores", "1", "downloads", "--configfile", str(config), "--replace-workflow-config")
    result = snakemake(*args, workdir=tmp_path, check=False, timeout=300)
    message = result.stdout + result.stderr
    assert result.returncode != 0
    assert message.count("no address for no-such-host.invalid") == 1, message[-3000:]
    assert "CRITICAL" not in message and not (tmp_path / "logs" / "downloads").exists()
