"""The download lock: the sha256, size and revision of every file the download rules fetched,
so that every later fetch of the same entry gets the same bytes or stops naming the entry.

One YAML file (config key ``downloads_lock_file``, relative to the working directory), one
entry per ``downloads.<name>``, sorted by name, no timestamps: the same downloads give the same
file, whatever order parallel download jobs finish in. Jobs update it under an exclusive
``flock`` on a hidden sidecar file and replace it atomically.
"""

from __future__ import annotations

import dataclasses
import fcntl
import logging
import os
import pathlib
import tempfile
from dataclasses import dataclass

import yaml

from repro.common.download import ChecksumMismatch, DownloadError, Fetched, fetch

log = logging.getLogger(__name__)
DEFAULT_LOCK_FILE = "config/downloads.lock.yaml"
HEADER = """\
# The download lock (repro.common.downloadlock; config/README.md, "Downloads"): sha256, size
# and, where the server named it, the revision (Hugging Face X-Repo-Commit) and ETag of every
# file the download rules fetched, by downloads.<name>. Written by the download rules; every
# later fetch of the same URL must give the same sha256, or the run stops naming the entry.
# Commit it. To accept a changed file, delete its entry (the next fetch records it again).
"""


class LockError(DownloadError):
    """A download the lock refuses: a changed file, or (strict) an entry it does not hold."""


@dataclass(frozen=True)
class LockEntry:
    url: str
    sha256: str
    size: int
    revision: str | None = None
    etag: str | None = None

    def describe(self) -> str:
        said = [f"revision {self.revision}"] if self.revision else []
        said += [f"ETag {self.etag}"] if self.etag else []
        return ", ".join([f"sha256 {self.sha256}", f"{self.size} bytes", *said])


def lock_settings(config: dict) -> tuple[pathlib.Path, bool]:
    """(lock file, strict) from a workflow config's top-level keys."""
    path = pathlib.Path(config.get("downloads_lock_file") or DEFAULT_LOCK_FILE)
    return path, config.get("downloads_lock", "record") == "strict"


def read_lock(path: str | os.PathLike) -> dict[str, LockEntry]:
    """The lock's entries by name; an absent or empty file holds none."""
    path = pathlib.Path(path)
    data = yaml.safe_load(path.read_text()) if path.is_file() else None
    return {name: LockEntry(**spec) for name, spec in (data or {}).items()}


def _dump(entries: dict[str, LockEntry]) -> str:
    body = {
        name: {k: v for k, v in dataclasses.asdict(e).items() if v is not None}
        for name, e in sorted(entries.items())
    }
    return HEADER + (yaml.safe_dump(body, sort_keys=False, width=1000) if body else "")


def record(path: str | os.PathLike, name: str, entry: LockEntry) -> None:
    """Set the lock's entry `name`: read, update and atomically replace the file while holding
    an exclusive lock on its sidecar, so that concurrent download jobs never lose an entry."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / f".{path.name}.flock", "a") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)  # released when the file closes
        entries = read_lock(path) | {name: entry}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}", suffix=".part")
        with os.fdopen(fd, "w") as out:
            out.write(_dump(entries))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)


def known_sha256(config: dict, name: str) -> str | None:
    """The sha256 a finished download of ``downloads.<name>`` was checked against: the
    config's pin, else the lock's entry for the same URL, else None. For jobs that check a
    file again before unpickling it (read at run time: the lock is written by the download)."""
    spec = (config.get("downloads") or {}).get(name) or {}
    if spec.get("sha256"):
        return spec["sha256"].lower()
    entry = read_lock(lock_settings(config)[0]).get(name)
    return entry.sha256 if entry is not None and entry.url == spec.get("url") else None


def expected_sha256(
    name: str, url: str, pinned: str | None, lock: dict[str, LockEntry], lock_path, strict: bool
) -> str | None:
    """The digest a fetch of downloads.<name> must give: the config's pin, else the lock's
    entry for this URL, else none (strict mode refuses that case)."""
    entry = lock.get(name)
    if pinned:
        return pinned.lower()
    if entry is not None and entry.url == url:
        return entry.sha256
    if strict:
        why = "its lock entry is for another URL" if entry else "it has no lock entry"
        raise LockError(
            f"downloads.{name}: downloads_lock is strict and {url} is neither pinned (sha256 "
            f"in the config) nor locked in {lock_path} ({why}); pin its sha256, or run once "
            "with downloads_lock: record to lock it"
        )
    if entry is not None:
        log.warning("downloads.%s: the URL changed from %s; it is locked anew", name, entry.url)
    return None


def locked_fetch(
    name: str,
    url: str,
    dest: str | os.PathLike,
    *,
    pinned: str | None,
    lock_path: str | os.PathLike,
    strict: bool,
    **download_kw,
) -> Fetched:
    """Fetch downloads.<name> and check it against the config's pin or the lock; record it in
    the lock when the lock does not hold it yet (or held another URL or pin)."""
    lock = read_lock(lock_path)
    want = expected_sha256(name, url, pinned, lock, lock_path, strict)
    entry = lock.get(name)
    try:
        got = fetch(url, dest, sha256=want, **download_kw)
    except ChecksumMismatch as e:
        if pinned or entry is None:
            raise
        raise LockError(
            f"downloads.{name}: the file at {url} is not the one locked in {lock_path} "
            f"({entry.describe()}): {e}. The server's copy changed; if that is intended, "
            f"delete the entry '{name}' from {lock_path} (or pin the new sha256 in the config) "
            "and rerun."
        ) from e
    if entry is not None and entry.url == url and entry.sha256 == got.sha256:
        if got.revision and entry.revision and got.revision != entry.revision:
            log.info("downloads.%s: same bytes at revision %s", name, got.revision)
        return got
    record(lock_path, name, LockEntry(url, got.sha256, got.size, got.revision, got.etag))
    log.info("downloads.%s: locked in %s (sha256 %s)", name, lock_path, got.sha256)
    return got
