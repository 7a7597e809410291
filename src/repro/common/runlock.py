"""One run at a time on a results folder: an exclusive ``flock`` held for a whole run.

Snakemake 9.27.1 removes the whole ``.snakemake/locks`` folder whenever any instance exits,
the locks of instances still running included, so its own lock cannot keep a second run off
the outputs of a first. This lock is held by the run's process for as long as it lives, and
the operating system releases it when that process ends, however it ends (SIGKILL
included): nothing is ever left to unlock by hand.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path


class RunLockError(RuntimeError):
    """Another live process holds the lock."""


def holder(path: str | Path) -> str:
    """What the lock file says about the process that took it last."""
    try:
        return Path(path).read_text().strip() or "a process that has not said who it is"
    except OSError:
        return "an unknown process"


def hold(path: str | Path) -> int:
    """Take the lock at ``path`` for this process and return its descriptor (keep it open:
    closing it releases the lock). Raises RunLockError naming the holder if another process
    has it; never waits."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by the jobs
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise RunLockError(
            f"another Snakemake run is using this folder's results/: {holder(path)}. "
            f"Wait for it to end, or stop it; its lock ({path}) goes with its process."
        ) from None
    command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"process {os.getpid()} ({command}), started {started}\n".encode(), 0)
    return fd
