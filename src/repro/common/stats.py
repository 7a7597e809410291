"""Paired comparisons over seeds that share data: the mean per-seed difference with its
confidence interval (paired t, or a percentile bootstrap of the mean)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

INTERVALS = ("t", "bootstrap")


@dataclasses.dataclass(frozen=True)
class PairedDifference:
    """a − b per seed, summarised: ``mean`` with a ``confidence`` interval [low, high].

    With one seed, or a NaN among the differences, the interval is (NaN, NaN): no verdict
    can rest on it.
    """

    mean: float
    low: float
    high: float
    n: int
    method: str
    confidence: float
    differences: tuple[float, ...]

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def text(self, digits: int = 3) -> str:
        pct = f"{100 * self.confidence:g}%"
        return (
            f"{self.mean:+.{digits}g} [{self.low:+.{digits}g}, {self.high:+.{digits}g}] "
            f"({pct} {self.method} interval, n = {self.n}, half-width {self.half_width:.{digits}g})"
        )


def paired_difference(
    a: Sequence[float] | Mapping,
    b: Sequence[float] | Mapping,
    *,
    confidence: float = 0.95,
    method: str = "t",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> PairedDifference:
    """The mean of a − b over paired seeds and its two-sided ``confidence`` interval.

    ``a`` and ``b`` are sequences in the same seed order, or mappings seed -> value (then
    the seeds must agree). ``method`` is ``t`` (Student's t on the differences, as
    scipy.stats.ttest_rel) or ``bootstrap`` (percentile bootstrap of the mean difference,
    ``n_resamples`` resamples of the seeds drawn with ``seed``).
    """
    if method not in INTERVALS:
        raise ValueError(f"method must be one of {INTERVALS}, got {method!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        if not (isinstance(a, Mapping) and isinstance(b, Mapping)) or set(a) != set(b):
            raise ValueError(f"paired values need the same seeds: {sorted(a)} vs {sorted(b)}")
        keys = sorted(a)
        a, b = [a[k] for k in keys], [b[k] for k in keys]
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if diffs.ndim != 1 or len(diffs) == 0:
        raise ValueError("paired values must be two equally long, non-empty sequences")
    mean = float(diffs.mean())
    low = high = math.nan
    if len(diffs) > 1 and np.isfinite(diffs).all():
        if method == "t":
            from scipy import stats  # here: the Snakefile imports this module (config checks)

            sem = float(diffs.std(ddof=1)) / math.sqrt(len(diffs))
            half = stats.t.ppf(0.5 + confidence / 2, df=len(diffs) - 1) * sem
            low, high = mean - half, mean + half
        else:
            rng = np.random.default_rng(seed)
            draws = rng.integers(0, len(diffs), size=(n_resamples, len(diffs)))
            means = diffs[draws].mean(axis=1)
            tail = 100 * (1 - confidence) / 2
            low, high = (float(v) for v in np.percentile(means, [tail, 100 - tail]))
    return PairedDifference(
        mean=mean,
        low=float(low),
        high=float(high),
        n=len(diffs),
        method=method,
        confidence=confidence,
        differences=tuple(float(d) for d in diffs),
    )
