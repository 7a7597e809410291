"""Timing for the benchmarks, the cost measurements and the timing claims (ratios against a
baseline measured in the same run; never a timed assertion in a test).

Timings that decide a verdict must not depend on the machine's load. Other processes on the
cores preempt a call (wall time) and, even where the process's CPU clock excludes the
preemption, leave it a cold cache, which slows a short call relatively more than a long one:
a factorised kernel's median speedup fell from 4.4 to 3.5 with one busy process beside it,
while the ratio of the minima stayed at 4.8–4.9. So the products of a comparison are called in turn
(A, B, A, B, …), which spreads a change of load over all of them, and the ratio is taken
between their fastest calls, the ones that other load disturbed least
(:func:`interleaved_times`, :func:`summary`, :func:`ratio_of_minima`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import numpy as np


def cpu_clock(threads: int) -> tuple[Callable[[], float], str]:
    """The clock for CPU work on ``threads`` threads, and its name: the process's CPU time
    for one thread (it does not run while other processes preempt this one); wall time for
    several (the process's CPU time adds up the threads)."""
    if threads == 1:
        return time.process_time, "process CPU time"
    return time.perf_counter, "wall time"


def interleaved_times(
    fns: Mapping[str, Callable[[], object]],
    repeats: int,
    *,
    warmup: int = 1,
    clock: Callable[[], float] = time.perf_counter,
    timer: Callable[[Callable[[], object]], float] | None = None,
) -> dict[str, list[float]]:
    """Per name, the durations of ``repeats`` calls of its function; the functions are
    called in turn (A, B, A, B, …) after ``warmup`` untimed rounds, so a change of load
    during the measurement hits all of them alike. A call is timed by ``timer(fn)`` where
    given (e.g. CUDA events), else as the difference of two ``clock()`` readings (seconds)."""
    if repeats < 1:
        raise ValueError(f"repeats must be ≥ 1, got {repeats}")

    def timed(fn) -> float:
        if timer is not None:
            return timer(fn)
        start = clock()
        fn()
        return clock() - start

    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            times[name].append(timed(fn))
    return times


def summary(values, unit: str = "ms") -> dict[str, float]:
    """Minimum, quartiles and median of a list of durations, keys ``min_<unit>`` etc."""
    q25, median, q75 = np.percentile(values, [25, 50, 75])
    return {
        f"min_{unit}": float(np.min(values)),
        f"q25_{unit}": float(q25),
        f"median_{unit}": float(median),
        f"q75_{unit}": float(q75),
    }


def ratio_of_minima(times: Mapping[str, list[float]], numerator: str, denominator: str) -> float:
    """Fastest call of ``numerator`` over the fastest of ``denominator`` (a speedup when the
    numerator is the baseline): the ratio the machine's load moves least."""
    return float(min(times[numerator]) / min(times[denominator]))


def best_time(
    fn: Callable[[], object],
    repeats: int = 5,
    *,
    warmup: bool = False,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Seconds of the fastest of ``repeats`` calls of ``fn`` (after one untimed call if
    ``warmup``): the fastest is the call that other load on the machine disturbed least."""
    return min(interleaved_times({"fn": fn}, repeats, warmup=int(warmup), clock=clock)["fn"])
