"""A greedy round's candidate factors: starts, their refinement, and reuse across rounds.

A candidate is a start (the support of a top-degree row, the biclique grown from such a row,
or a min-hash row group) refined by alternating exact maximisation. Its result depends only
on the residual's cells in the rows and columns the refinement read. A factor U×V changes
cells in every row of U and every column of V, so a later round reuses a candidate while no
accepted factor has touched a row or column it read: the reused result is then exactly what
refining the start again would give, and each round refines only new starts and those
whose neighbourhood changed.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from repro.sbd.minhash import MinHashIndex

GROW_POOL = 200  # grown starts: rows tried, by overlap with the seed row


class Reads:
    """The rows and columns whose cells a refinement read."""

    def __init__(self):
        self.rows, self.cols = [], []

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return tuple(
            np.unique(np.concatenate(x)) if x else np.zeros(0, np.int64)
            for x in (self.rows, self.cols)
        )


@dataclasses.dataclass(frozen=True)
class Refined:
    round: int  # the round whose residual it was computed on
    gain: float
    U: np.ndarray | None
    V: np.ndarray | None
    rows_read: np.ndarray
    cols_read: np.ndarray


def alternate(R, s: int, cfg, *, V=None, U=None, reads: Reads | None = None, memo=None):
    """Alternate the exact U- and V-updates from a start (V or U) until the gain stops
    rising; returns (gain, U, V), U and V sorted. Each half-step is an exact maximisation,
    so the gain of successive pairs never decreases. ``reads`` collects what was read;
    ``memo`` (a dict, valid for one residual) shares the work of starts that reach the
    same columns."""
    reads = reads if reads is not None else Reads()
    if U is not None:  # a start from rows: their exact best columns first
        reads.rows.append(U)
        V, _ = R.best_side("cols", U, s, cfg.signed)
    key = (s, np.sort(V).tobytes())
    if memo is None or key not in memo:
        loop = Reads()
        best = (-np.inf, None, None)
        for _ in range(cfg.max_iter):
            if len(V) == 0:
                break
            loop.cols.append(V)
            U, _ = R.best_side("rows", V, s, cfg.signed)
            if len(U) == 0:
                break
            loop.rows.append(U)
            V, gain = R.best_side("cols", U, s, cfg.signed)
            if gain <= best[0]:
                break
            best = (gain, U, V)
        gain, U, V = best
        result = (gain, np.sort(U), np.sort(V)) if U is not None else best
        if memo is None:
            memo = {}
        memo[key] = result, loop
    result, loop = memo[key]
    reads.rows += loop.rows
    reads.cols += loop.cols
    return result


def top_rows(degree: np.ndarray, k: int) -> np.ndarray:
    """The k rows of highest degree, ties by index: ``argsort(-degree, stable)[:k]`` with an
    O(m) partition instead of a sort of every row."""
    if k >= len(degree):
        return np.argsort(-degree, kind="stable")[:k]
    if k <= 0:
        return np.zeros(0, np.int64)
    kth = np.partition(degree, len(degree) - k)[len(degree) - k]
    above = np.flatnonzero(degree > kth)
    chosen = np.concatenate([above, np.flatnonzero(degree == kth)[: k - len(above)]])
    chosen.sort()
    return chosen[np.argsort(-degree[chosen], kind="stable")]


def grow(R, seed_row: int, s: int, reads: Reads, pool: int = GROW_POOL):
    """Grown start: add rows by overlap with the seed row's sign-s support V, shrinking the
    shared columns, and keep the prefix with the largest exact-biclique proxy gain. Only
    cells in the columns V matter, so those columns are what it reads."""
    V = R.row_support(seed_row, s)
    reads.rows.append([seed_row])
    if len(V) < 2:
        return None
    reads.cols.append(V)
    lines, overlap = R.scores("rows", V, s, signed=True)  # overlap-ish order only
    order = lines[np.lexsort((lines, -overlap))][:pool]
    best, shared, rows = (-1, V), V, [seed_row]
    for row in order[order != seed_row]:
        shared = np.intersect1d(shared, R.row_support(row, s), assume_unique=True)
        rows.append(row)
        score = len(rows) * len(shared) - len(rows) - len(shared)
        if len(shared) < 2:
            break
        if score > best[0]:
            best = (score, shared)
    return best[1]


class Candidates:
    def __init__(self, R, cfg):
        self.cfg = cfg
        self.signs = (1, -1) if cfg.signed else (1,)
        self.kinds = tuple(cfg.starts or (("support",) if cfg.signed else ("grow",)))
        if unknown := set(self.kinds) - {"support", "grow"}:
            raise ValueError(f"starts: unknown kinds {sorted(unknown)} (support, grow)")
        self.row_changed = np.full(R.shape[0], -1)  # the last round that changed the row
        self.col_changed = np.full(R.shape[1], -1)
        self.cache: dict[tuple, Refined] = {}
        self.refined = self.reused = 0
        self.minhash = {
            s: MinHashIndex(
                R, s, bands=cfg.minhash_bands, rows_per_band=cfg.minhash_rows, seed=cfg.minhash_seed
            )
            for s in (self.signs if cfg.minhash_bands else ())
        }

    def _starts(self, R):
        """(key, sign, start) in a fixed order: per sign, the degree seeds, then min-hash groups."""
        for s in self.signs:
            degree = R.degree[s]
            top = top_rows(degree, self.cfg.degree_seeds)
            for row in top[degree[top] >= 2].tolist():
                for kind in self.kinds:
                    yield (s, kind, row), s, row
            if s in self.minhash:
                for key, group in self.minhash[s].groups(self.cfg.minhash_candidates):
                    yield (s, "group", key), s, group

    def _valid(self, entry: Refined) -> bool:
        """No cell of a row or column the entry read has changed since it was computed."""
        return all(
            len(read) == 0 or changed[read].max() < entry.round
            for read, changed in (
                (entry.rows_read, self.row_changed),
                (entry.cols_read, self.col_changed),
            )
        )

    def _refine(self, R, kind, s, start, round_, memo) -> Refined:
        reads = Reads()
        if kind == "group":
            result = alternate(R, s, self.cfg, U=start, reads=reads, memo=memo)
        else:
            reads.rows.append([start])
            V = R.row_support(start, s) if kind == "support" else grow(R, start, s, reads)
            result = (-np.inf, None, None)
            if V is not None:
                result = alternate(R, s, self.cfg, V=V, reads=reads, memo=memo)
        self.refined += 1
        return Refined(round_, *result, *reads.arrays())

    def round(self, R, round_: int) -> list[tuple[float, int, np.ndarray, np.ndarray]]:
        """(gain, sign, U, V) of every candidate of this round, in start order."""
        cache, found, memo = {}, [], {}
        for key, s, start in self._starts(R):
            entry = self.cache.get(key)
            if entry is not None and self._valid(entry):
                self.reused += 1
            else:
                entry = self._refine(R, key[1], s, start, round_, memo)
            cache[key] = entry
            found.append((entry.gain, s, entry.U, entry.V))
        self.cache = cache  # starts not seen this round are dropped
        return found

    def changed(self, R, factors, round_: int) -> None:
        """Record the rows and columns this round's factors changed (after R.subtract)."""
        for U, V, _ in factors:
            self.row_changed[U] = round_
            self.col_changed[V] = round_
        rows = np.unique(np.concatenate([U for U, _, _ in factors]))
        for index in self.minhash.values():
            index.update(R, rows)
