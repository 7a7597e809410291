"""The download lock and the size summary, against a real HTTP server on 127.0.0.1 that
answers like the Hugging Face Hub (a redirect carrying X-Repo-Commit and X-Linked-Size)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import multiprocessing
import threading
from pathlib import Path

import pytest
import yaml

from repro.common.download import DownloadError
from repro.common.downloadlock import (
    HEADER,
    LockEntry,
    LockError,
    locked_fetch,
    read_lock,
    record,
)
from repro.common.downloadplan import referenced_downloads, remote_size, summary

FAST = {"timeout": 5.0, "backoff_s": 0.001, "retries": 2}
COMMIT = "0123456789abcdef0123456789abcdef01234567"


class Hub(http.server.SimpleHTTPRequestHandler):
    """/resolve/main/<file> redirects (302, with X-Repo-Commit, ETag and X-Linked-Size) to
    /cdn/<file>, which serves the file; /nohead/<file> answers GET only."""

    def log_message(self, *args):
        pass

    def _route(self, head: bool):
        self.server.requests.append((self.command, self.path))
        if self.path.startswith("/resolve/main/"):
            name = self.path.removeprefix("/resolve/main/")
            data = (self.server.root / name).read_bytes()
            self.send_response(302)
            self.send_header("Location", f"/cdn/{name}")
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            self.send_header("X-Linked-Size", str(len(data)))
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path.startswith("/nohead/") and head:
            self.send_error(405)
        else:
            self.path = "/" + self.path.split("/", 2)[2]  # /cdn/x or /nohead/x -> /x
            super().do_HEAD() if head else super().do_GET()

    def do_GET(self):
        self._route(head=False)

    def do_HEAD(self):
        self._route(head=True)


@pytest.fixture
def hub(tmp_path):
    root = tmp_path / "srv"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Hub, directory=str(root))
    )
    server.root, server.requests = root, []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}", server
    finally:
        server.shutdown()
        server.server_close()


def _fetch(name, url, tmp_path, lock, *, pinned=None, strict=False):
    dest = tmp_path / "out" / name
    return locked_fetch(name, url, dest, pinned=pinned, lock_path=lock, strict=strict, **FAST)


def test_first_fetch_locks_sha_size_and_revision_then_verifies(hub, tmp_path):
    root, base, _ = hub
    (root / "w.bin").write_bytes(b"weights" * 1000)
    digest = hashlib.sha256(b"weights" * 1000).hexdigest()
    lock = tmp_path / "lock.yaml"
    url = f"{base}/resolve/main/w.bin"
    got = _fetch("w", url, tmp_path, lock)
    assert (got.sha256, got.size, got.revision) == (digest, 7000, COMMIT)
    assert read_lock(lock) == {"w": LockEntry(url, digest, 7000, COMMIT, f'"{digest}"')}
    assert lock.read_text().startswith(HEADER)
    before = lock.read_bytes()
    _fetch("w", url, tmp_path, lock)  # the same bytes: passes, the lock is unchanged
    assert lock.read_bytes() == before


def test_a_changed_file_fails_naming_the_entry_and_the_lock(hub, tmp_path):
    root, base, _ = hub
    (root / "d.csv").write_text("a,b\n1,2\n")
    lock = tmp_path / "lock.yaml"
    url = f"{base}/resolve/main/d.csv"
    _fetch("table", url, tmp_path, lock)
    before = lock.read_bytes()
    (root / "d.csv").write_text("a,b\n1,3\n")  # the moving branch moved
    dest = tmp_path / "out" / "table"
    dest.unlink()
    with pytest.raises(LockError) as error:
        _fetch("table", url, tmp_path, lock)
    message = str(error.value)
    assert "downloads.table" in message and str(lock) in message
    assert "not the one locked" in message and f"revision {COMMIT}" in message
    assert "delete the entry 'table'" in message
    assert not dest.exists() and lock.read_bytes() == before


def test_strict_refuses_an_entry_neither_pinned_nor_locked(hub, tmp_path):
    root, base, server = hub
    (root / "x.bin").write_bytes(b"x" * 10)
    lock = tmp_path / "lock.yaml"
    with pytest.raises(LockError, match=r"downloads\.x: downloads_lock is strict"):
        _fetch("x", f"{base}/cdn/x.bin", tmp_path, lock, strict=True)
    assert server.requests == [] and not lock.exists()  # refused before any request
    pinned = hashlib.sha256(b"x" * 10).hexdigest()
    _fetch("x", f"{base}/cdn/x.bin", tmp_path, lock, pinned=pinned, strict=True)  # pinned: ok
    _fetch("y", f"{base}/cdn/x.bin", tmp_path, lock)  # record, then strict accepts it
    (tmp_path / "out" / "y").unlink()
    _fetch("y", f"{base}/cdn/x.bin", tmp_path, lock, strict=True)
    with pytest.raises(LockError, match="its lock entry is for another URL"):
        _fetch("y", f"{base}/nohead/x.bin", tmp_path, lock, strict=True)


def test_a_pin_in_the_config_outranks_the_lock(hub, tmp_path):
    root, base, _ = hub
    (root / "p.bin").write_bytes(b"new")
    lock = tmp_path / "lock.yaml"
    url = f"{base}/cdn/p.bin"
    record(lock, "p", LockEntry(url, "0" * 64, 3))
    with pytest.raises(DownloadError, match="checksum mismatch"):  # a wrong pin still fails
        _fetch("p", url, tmp_path, lock, pinned="1" * 64)
    new = hashlib.sha256(b"new").hexdigest()
    _fetch("p", url, tmp_path, lock, pinned=new)
    assert read_lock(lock)["p"].sha256 == new


def _record_many(lock, names):
    for name in names:
        record(lock, name, LockEntry(f"http://h/{name}", name[-1] * 64, len(name)))


def test_concurrent_jobs_lose_no_entry_and_the_file_is_deterministic(tmp_path):
    """Eight processes record 40 entries into one lock at once; every entry survives, and
    the file is byte-identical to one written in another order."""
    names = [f"entry_{i:02d}_{'abcdef'[i % 6]}" for i in range(40)]
    lock = tmp_path / "lock.yaml"
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_record_many, args=(lock, names[k::8])) for k in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
        assert w.exitcode == 0
    serial = tmp_path / "serial.yaml"
    _record_many(serial, reversed(names))
    assert set(read_lock(lock)) == set(names)
    assert lock.read_bytes() == serial.read_bytes()
    assert list(yaml.safe_load(lock.read_text())) == sorted(names)


def test_head_sizes_and_the_summary(hub):
    root, base, server = hub
    (root / "a.bin").write_bytes(b"a" * 1500)
    (root / "b.bin").write_bytes(b"b" * 2500)
    assert remote_size(f"{base}/resolve/main/a.bin") == 1500  # through the redirect
    assert remote_size(f"{base}/cdn/b.bin") == 2500
    assert remote_size(f"{base}/nohead/b.bin") is None  # 405 to HEAD
    assert remote_size("http://127.0.0.1:9/nothing") is None  # nobody listening
    assert all(method == "HEAD" for method, _ in server.requests)  # HEAD kept on redirect
    text = summary(
        {"a": f"{base}/resolve/main/a.bin", "b": f"{base}/cdn/b.bin", "c": f"{base}/nohead/b"},
        {"c": "downloads.c: refused"},
    )
    lines = text.splitlines()
    assert lines[0] == "downloads: 3 file(s) to fetch, 4.0 kB in total (1 of unknown size)"
    assert lines[1].startswith("  a: 1.5 kB") and lines[2].startswith("  b: 2.5 kB")
    assert "? (no size from HEAD)" in lines[3]
    assert lines[4] == "  refused (downloads_lock: strict): downloads.c: refused"


def test_referenced_downloads_are_those_enabled_papers_name():
    config = {
        "downloads": {n: {} for n in ("a", "b", "c", "d", "e")},
        "papers": {
            "one": {"enabled": True, "x": {"download": "a", "files": ["b", "zzz"]}},
            "two": {"enabled": False, "download": "c"},
            "three": {"enabled": True, "deep": [{"k": {"source": "d"}}], "name": "a"},
        },
    }
    assert referenced_downloads(config) == ["a", "b", "d"]


def test_the_full_scale_lock_is_a_lock_of_full_yaml_entries():
    root = Path(__file__).resolve().parents[2]
    full = yaml.safe_load((root / "config" / "full.yaml").read_text())
    path = root / full["downloads_lock_file"]
    assert path.read_text().startswith(HEADER)
    for name, entry in read_lock(path).items():
        assert entry.url == full["downloads"][name]["url"], name
