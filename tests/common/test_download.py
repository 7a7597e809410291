"""repro.common.download against a real HTTP server on 127.0.0.1 (no mocks)."""

import functools
import hashlib
import http.server
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from repro.common.download import DownloadError, download, sha256_of

DATA = os.urandom(3 * (1 << 20) + 123)  # several 1 MiB chunks plus a ragged tail
DIGEST = hashlib.sha256(DATA).hexdigest()
FAST = {"timeout": 2.0, "backoff_s": 0.001}  # keep every test well under a second
SRC = str(Path(__file__).resolve().parents[2] / "src")


class Recording(http.server.SimpleHTTPRequestHandler):
    """Serves files from the server root and records every GET path."""

    def do_GET(self):
        self.server.paths.append(self.path)
        self.respond()

    def respond(self):
        super().do_GET()

    def log_message(self, *args):  # keep pytest output quiet
        pass


class Flaky(Recording):
    """500 for the first two requests, then the file."""

    def respond(self):
        if len(self.server.paths) <= 2:
            self.send_error(500)
        else:
            super().respond()


class Truncating(Recording):
    """Promises the whole file in Content-Length, sends half, then closes (HTTP/1.0)."""

    def respond(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(DATA)))
        self.end_headers()
        self.wfile.write(DATA[: len(DATA) // 2])


class Hanging(Recording):
    """Sends headers, then stalls until the test ends."""

    def respond(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(DATA)))
        self.end_headers()
        self.server.release.wait(10)


@pytest.fixture
def out(tmp_path):
    d = tmp_path / "out"
    d.mkdir()
    return d


@pytest.fixture
def serve(tmp_path):
    """serve(handler) -> (base_url, server); the server root holds data.bin = DATA."""
    root = tmp_path / "srv"
    root.mkdir()
    (root / "data.bin").write_bytes(DATA)
    servers = []

    def start(handler=Recording):
        httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
        )
        httpd.paths, httpd.release = [], threading.Event()
        threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_port}", httpd

    yield start
    for httpd in servers:
        httpd.release.set()
        httpd.shutdown()
        httpd.server_close()


def test_success(serve, out, caplog):
    url, srv = serve()
    dest = out / "nested" / "data.bin"  # parent folder does not exist yet
    with caplog.at_level(logging.INFO, logger="repro.common.download"):
        assert download(f"{url}/data.bin", dest, sha256=DIGEST, **FAST) == dest
    assert dest.read_bytes() == DATA
    assert sha256_of(dest) == DIGEST
    assert list(dest.parent.iterdir()) == [dest]  # no .part file left
    assert srv.paths == ["/data.bin"]
    assert any(r.getMessage().startswith("done ") for r in caplog.records)


def test_checksum_mismatch_fails_at_the_first_attempt_clean(serve, out):
    url, srv = serve()
    dest = out / "data.bin"
    with pytest.raises(DownloadError, match="sha256 checksum mismatch") as exc:
        download(f"{url}/data.bin", dest, sha256="0" * 64, retries=3, **FAST)
    assert DIGEST in str(exc.value) and "0" * 64 in str(exc.value)
    assert url in str(exc.value)
    assert len(srv.paths) == 1  # a whole transfer of another file: fetching again gives it again
    assert not dest.exists()
    assert list(out.iterdir()) == []


def test_404_fails_at_once(serve, out):
    url, srv = serve()
    t0 = time.monotonic()
    with pytest.raises(DownloadError, match="HTTP 404") as exc:
        download(f"{url}/missing.bin", out / "x", sha256=None, retries=5, timeout=2, backoff_s=5)
    assert time.monotonic() - t0 < 2  # a retry would sleep 5 s
    assert f"{url}/missing.bin" in str(exc.value)
    assert srv.paths == ["/missing.bin"]
    assert list(out.iterdir()) == []


def test_truncated_transfer(serve, out):
    url, srv = serve(Truncating)
    with pytest.raises(DownloadError, match="truncated"):
        download(f"{url}/data.bin", out / "data.bin", sha256=None, retries=2, **FAST)
    assert len(srv.paths) == 2  # truncation is retried
    assert list(out.iterdir()) == []


def test_timeout(serve, out):
    url, _ = serve(Hanging)
    t0 = time.monotonic()
    with pytest.raises(DownloadError, match="[Tt]imeout|timed out"):
        download(f"{url}/data.bin", out / "data.bin", sha256=None, retries=1, timeout=0.2)
    assert time.monotonic() - t0 < 2
    assert list(out.iterdir()) == []


def test_flaky_server_succeeds_with_retries(serve, out):
    url, srv = serve(Flaky)
    dest = out / "data.bin"
    download(f"{url}/data.bin", dest, sha256=DIGEST, retries=3, **FAST)
    assert dest.read_bytes() == DATA
    assert len(srv.paths) == 3
    assert list(out.iterdir()) == [dest]


def test_flaky_server_fails_without_retries(serve, out):
    url, srv = serve(Flaky)
    with pytest.raises(DownloadError, match="HTTP 500"):
        download(f"{url}/data.bin", out / "data.bin", sha256=DIGEST, retries=1, **FAST)
    assert len(srv.paths) == 1  # retries counts attempts in all
    assert list(out.iterdir()) == []


def test_existing_correct_dest_makes_no_request(serve, out):
    url, srv = serve()
    dest = out / "data.bin"
    dest.write_bytes(DATA)
    assert download(f"{url}/data.bin", dest, sha256=DIGEST, **FAST) == dest
    assert srv.paths == []


def test_failure_leaves_existing_dest_untouched(serve, out):
    url, _ = serve()
    dest = out / "data.bin"
    dest.write_bytes(b"old")
    with pytest.raises(DownloadError):
        download(f"{url}/data.bin", dest, sha256="0" * 64, retries=1, **FAST)
    assert dest.read_bytes() == b"old"
    assert list(out.iterdir()) == [dest]


def test_stale_dest_is_replaced(serve, out):
    url, srv = serve()
    dest = out / "data.bin"
    dest.write_bytes(b"stale")
    download(f"{url}/data.bin", dest, sha256=DIGEST, **FAST)
    assert dest.read_bytes() == DATA
    assert srv.paths == ["/data.bin"]


def _cli(*args):
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cmd = [sys.executable, "-m", "repro.common.download", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=30)


def test_cli_exit_codes(serve, out):
    url, _ = serve()
    bad = _cli(f"{url}/missing.bin", str(out / "x"), "--sha256", DIGEST, "--retries", "1")
    assert bad.returncode == 1
    assert "HTTP 404" in bad.stderr
    ok = _cli(f"{url}/data.bin", str(out / "data.bin"), "--sha256", DIGEST)
    assert ok.returncode == 0, ok.stderr
    assert (out / "data.bin").read_bytes() == DATA
