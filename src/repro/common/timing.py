"""Timing for the benchmarks and the cost measurements (ratios against a baseline measured in
the same run; never a timed assertion in a test)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_time(
    fn: Callable[[], object],
    repeats: int = 5,
    *,
    warmup: bool = False,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Seconds of the fastest of ``repeats`` calls of ``fn`` (after one untimed call if
    ``warmup``): the fastest is the call that other load on the machine disturbed least."""
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)
