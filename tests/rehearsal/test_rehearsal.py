"""The rehearsal's pieces: URLs mapped onto the local server, the site overlay and lock, the
readiness table's counts (the rehearsal itself: `make rehearsal`)."""

from __future__ import annotations

import hashlib
import urllib.request

import pytest
import yaml

from repro.common.downloadlock import read_lock
from tests.rehearsal import readiness, run
from tests.rehearsal.standins import local_url, served_path

LISTING = (
    "https://datasets-server.huggingface.co/parquet?dataset=tanganke/dtd&config=default&split={}"
)
SHARD = "https://huggingface.co/datasets/RobZamp/sick/resolve/refs%2Fconvert%2Fparquet/default/test/0000.parquet"


def test_each_url_is_served_from_its_own_file(tmp_path):
    """Two listings that differ only by their query, and a path with an escaped slash."""
    www = tmp_path / "www"
    files = {LISTING.format("test"): b"test split", LISTING.format("train"): b"train split"}
    files[SHARD] = b"PAR1 shard"
    for url, body in files.items():
        path = www / served_path(url)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    assert (www / "huggingface.co/datasets/RobZamp/sick/resolve/refs/convert/parquet").is_dir()
    with run.serving(www) as base:
        for url, body in files.items():
            local = local_url(url, base)
            assert local.startswith("http://127.0.0.1:") and local.endswith(url.split("/")[-1])
            with urllib.request.urlopen(local) as response:
                assert response.read() == body


def test_site_pins_what_full_scale_pins_and_locks_the_rest(tmp_path, monkeypatch):
    """metabric is pinned in full.yaml (sha256 of the stand-in here), mag_us is not (locked)."""
    config = run.merged_config()
    config["papers"] = {  # one paper naming two entries (any string value names an entry)
        "qsurv": {"enabled": True, "real_datasets": {"a": "metabric", "b": "mag_us"}},
        "sbd": {"enabled": False, "datasets": {"c": "sbd_ca_hepph"}},
    }
    monkeypatch.setattr(run, "merged_config", lambda papers=None: config)
    site = yaml.safe_load(run.write_site(tmp_path, "http://127.0.0.1:9").read_text())
    www = tmp_path / "www"

    def digest(name):
        path = www / served_path(config["downloads"][name]["url"])
        return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size

    assert sorted(site["downloads"]) == ["mag_us", "metabric"]
    assert site["downloads"]["metabric"]["sha256"] == digest("metabric")[0]
    assert "sha256" not in site["downloads"]["mag_us"]
    lock = read_lock(site["downloads_lock_file"])
    assert list(lock) == ["mag_us"]
    assert (lock["mag_us"].sha256, lock["mag_us"].size) == digest("mag_us")
    assert (
        lock["mag_us"].url == "http://127.0.0.1:9/zenodo.org/records/10681285/files/US_labels_20.pt"
    )


def _record(**extra):
    outputs = [  # QSurv: 3 prepared sets planned, 2 made; its download made; SBD all made
        ("results/downloads/metabric/m.h5", "download_dataset", True),
        ("results/downloads/sbd_ca_hepph/c.txt.gz", "download_unverified", True),
        ("results/qsurv/data/a.npz", "qsurv_prepare", True),
        ("results/qsurv/data/b.npz", "qsurv_prepare", True),
        ("results/qsurv/data/c.npz", "qsurv_prepare", False),
        ("results/qsurv/runs/a.json", "qsurv_train", False),
        ("results/sbd/eval/a.json", "sbd_evaluate", True),
        ("results/sbd/claims.html", "claims_page", True),
        ("results/claims.md", "claims_report", True),
    ]
    return {
        "papers": ["qsurv", "sbd"],
        "downloads": {"qsurv": ["metabric"], "sbd": ["sbd_ca_hepph"]},
        "wall_s": 600,
        "cpu_s": 1140,
        "outputs": [{"output": o, "rule": r, "exists": e} for o, r, e in outputs],
        **extra,
    }


def test_readiness_cells_count_what_the_rehearsal_made():
    cells = readiness.cells(_record())
    assert cells == {
        "qsurv": {"download": (1, 1), "loader": (2, 3), "model and trainer": (0, 1)},
        "sbd": {"download": (1, 1), "evaluator": (1, 1), "report": (1, 1)},
    }
    table = readiness.table(_record())
    qsurv = next(line for line in table.splitlines() if line.startswith("| QSurv |"))
    assert qsurv.split(" | ")[1:4] == [
        "executed",
        "partly executed (2 of 3 outputs)",
        "not executed",
    ]
    assert "6 of 8 outputs the DAG plans for them made" in table


def test_a_rule_no_stage_names_stops_the_table():
    record = _record()
    record["outputs"].append(
        {"output": "results/sbd/x.json", "rule": "sbd_new_step", "exists": True}
    )
    with pytest.raises(ValueError, match="sbd_new_step"):
        readiness.cells(record)


def test_rewrite_replaces_only_the_rehearsed_papers_rows():
    doc = "# T\n\nintro\n\n| paper | a |\n|---|---|\n| QSurv | old |\n| PLSA | kept |\n\nend\n"
    once = readiness.rewrite(doc, _record())
    assert "| QSurv | old |" not in once and "| PLSA | kept |" in once
    assert once.index(readiness.BEGIN) < once.index("| PLSA | kept |") and once.endswith("end\n")
    assert readiness.rewrite(once, _record()) == once


def _leaves(node, path=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    else:
        yield path, node


def test_the_overlay_changes_only_sizes():
    """Every value the overlay sets is a number or a list of numbers (epochs, rows, seeds...),
    besides the device, the threads, the lock mode and which papers run: no claim, method,
    data set, download or rule setting of full scale is replaced."""
    overlay = yaml.safe_load(run.OVERLAY.read_text())
    settings = {("device",): "auto", ("threads",): 1, ("downloads_lock",): "strict"}
    for path, value in _leaves(overlay):
        if path in settings:
            assert value == settings[path]
        elif path[-1] == "enabled":
            assert path[0] == "papers" and len(path) == 3 and isinstance(value, bool)
        else:
            numbers = value if isinstance(value, list) else [value]
            assert all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers), (
                path
            )
            assert not {"claims", "checks", "methods", "downloads"} & set(path), path


def test_records_of_separate_rehearsals_merge_in_the_configs_order():
    whole = _record()
    sbd_first = [
        {
            "papers": [p],
            "downloads": {p: whole["downloads"][p]},
            "outputs": [o for o in whole["outputs"] if readiness.owner(o, whole) == p],
        }
        for p in ("sbd", "qsurv")
    ]
    together = readiness.merged(sbd_first, ["qsurv", "plsa", "sbd"])
    assert together["papers"] == ["qsurv", "sbd"]
    assert readiness.cells(together) == readiness.cells(whole)
