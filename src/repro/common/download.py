"""Robust downloads (standard library only): streamed, size/sha256-checked, retried, atomic."""

from __future__ import annotations

import argparse
import hashlib
import http.client
import logging
import os
import pathlib
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

log = logging.getLogger(__name__)
CHUNK = 1 << 20  # 1 MiB
LOG_STEP = 50 << 20  # progress line every 10% of the size or 50 MiB, whichever comes first
USER_AGENT = "repro-download/0.1"  # some hosts reject urllib's default agent with 403


class DownloadError(RuntimeError):
    """A download failed for good (after any retries)."""


class _Retryable(DownloadError):
    """A failure that a later attempt may not repeat (network, 5xx/429, truncation)."""


class ChecksumMismatch(DownloadError):
    """The bytes received do not have the expected sha256. Final, not retried: the transfer
    was whole (its length checked), so the server holds another file, and fetching it again
    (gigabytes, for the h5ad files) gives the same bytes."""


# Headers naming the revision a moving URL resolved to: the Hugging Face Hub's commit (sent on
# its redirect to the CDN too) and the entity tag of whichever response carried it.
REVISION_HEADER = "X-Repo-Commit"


@dataclass(frozen=True)
class Fetched:
    """What a download gave: the file, its digest and size, and what the server said about
    its revision (None where it said nothing)."""

    path: pathlib.Path
    sha256: str
    size: int
    revision: str | None = None
    etag: str | None = None


class _RecordingRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects as urllib does, keeping the headers of every hop (the Hub sends its
    X-Repo-Commit on the redirect, not on the CDN's answer)."""

    def __init__(self):
        self.hops = []

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        self.hops.append(headers)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _revision(hops) -> tuple[str | None, str | None]:
    """(revision, etag) from a response chain: the first X-Repo-Commit and the first ETag."""
    revision = next((h[REVISION_HEADER] for h in hops if h.get(REVISION_HEADER)), None)
    return revision, next((h["ETag"] for h in hops if h.get("ETag")), None)


def sha256_of(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _copy(resp, out, url: str) -> str:
    """Copy the body into `out`, logging progress; return its sha256 hex digest."""
    length = resp.headers.get("Content-Length", "")
    size = int(length) if length.isdigit() else None  # absent when chunked
    step = max(1, min(size // 10, LOG_STEP)) if size else LOG_STEP
    h, got, next_log, t0 = hashlib.sha256(), 0, step, time.monotonic()
    log.info("downloading %s (%s bytes)", url, size or "unknown")
    # read(n) returns b"" when the peer closes early, so the byte count below is the check.
    while chunk := resp.read(CHUNK):
        out.write(chunk)
        h.update(chunk)
        got += len(chunk)
        if got >= next_log:
            log.info("%s: %d of %s bytes", url, got, size or "unknown")
            next_log += step
    if size is not None and got != size:
        raise _Retryable(f"truncated transfer from {url}: got {got} of {size} bytes")
    log.info("done %s: %d bytes in %.1fs", url, got, time.monotonic() - t0)
    return h.hexdigest()


def _fetch(url: str, out, timeout: float) -> tuple[str, str | None, str | None]:
    """Stream `url` into `out`; return (sha256, revision, etag); sort failures into retryable
    and final ones."""
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    redirects = _RecordingRedirects()
    try:
        with urllib.request.build_opener(redirects).open(req, timeout=timeout) as resp:
            digest = _copy(resp, out, url)
            return (digest, *_revision([*redirects.hops, resp.headers]))
    except urllib.error.HTTPError as e:
        e.close()
        # 5xx and 429 are the server's momentary trouble; other 4xx will not change.
        kind = _Retryable if e.code >= 500 or e.code == 429 else DownloadError
        raise kind(f"HTTP {e.code} {e.reason} for {url}") from e
    # HTTPException covers IncompleteRead and RemoteDisconnected; TimeoutError is socket.timeout.
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError) as e:
        raise _Retryable(f"{type(e).__name__} for {url}: {e}") from e


def _attempt(url: str, dest: pathlib.Path, sha256: str | None, timeout: float) -> Fetched:
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix="." + dest.name, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            digest, revision, etag = _fetch(url, out, timeout)
            out.flush()
            os.fsync(out.fileno())  # data on disk before the rename makes it visible
            size = out.tell()
        if sha256 and digest != sha256.lower():
            want = f"expected {sha256.lower()}, got {digest}"
            raise ChecksumMismatch(f"sha256 checksum mismatch for {url}: {want}")
        if not sha256:
            log.warning("no sha256 pinned for %s; this copy has sha256 %s", url, digest)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; shared data folders need readable files
        os.replace(tmp, dest)  # atomic: readers see the old file or the whole new one
    except BaseException:  # also Ctrl-C: never leave a partial file behind
        os.unlink(tmp)  # still there: os.replace is the last step
        raise
    return Fetched(dest, digest, size, revision, etag)


def download(url: str, dest: str | os.PathLike, **options) -> pathlib.Path:
    """`fetch`, returning the path only (the options are fetch's)."""
    return fetch(url, dest, **options).path


def fetch(
    url: str,
    dest: str | os.PathLike,
    *,
    sha256: str | None,
    retries: int = 3,
    timeout: float = 60.0,
    backoff_s: float = 1.0,
) -> Fetched:
    """Download `url` to `dest` atomically; return what was fetched (digest, size, the
    server's revision). `retries` is the number of attempts in all (>= 1); waits
    backoff_s * 2**k between them; a sha256 mismatch stops at the first attempt. Raises
    DownloadError (ChecksumMismatch for a mismatch); dest is untouched on failure. A dest
    already present with the expected sha256 is kept (no request; revision unknown)."""
    dest = pathlib.Path(dest)
    if sha256 and dest.is_file() and sha256_of(dest) == sha256.lower():
        log.info("%s already present with the expected sha256", dest)
        return Fetched(dest, sha256.lower(), dest.stat().st_size)
    dest.parent.mkdir(parents=True, exist_ok=True)
    attempts = max(1, retries)
    for k in range(attempts):
        try:
            return _attempt(url, dest, sha256, timeout)
        except _Retryable as e:
            if k + 1 == attempts:
                raise DownloadError(f"{e} (gave up after {attempts} attempt(s))") from e
            wait = backoff_s * 2**k
            log.warning("attempt %d/%d failed: %s; retry in %.2fs", k + 1, attempts, e, wait)
            time.sleep(wait)
    raise AssertionError("unreachable")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Download a file atomically, checking its sha256.")
    p.add_argument("url")
    p.add_argument("dest")
    p.add_argument("--sha256", metavar="HEX", help="expected hex digest; checked after download")
    p.add_argument("--retries", type=int, default=3, help="attempts in all (default 3)")
    p.add_argument("--timeout", type=float, default=60.0, help="socket timeout, seconds")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        download(
            args.url, args.dest, sha256=args.sha256, retries=args.retries, timeout=args.timeout
        )
    except (DownloadError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
