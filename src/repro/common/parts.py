"""Names split into the parts that one workflow job each handles (``{part}`` wildcards).

A paper that trains several models or methods per job lists them in order and cuts the list
into parts of ``size`` names; the part's index is the job's wildcard, and every later step
finds a name's files through ``part_of``.
"""

from __future__ import annotations

from collections.abc import Sequence


def split_into_parts(names: Sequence[str], size: int | None) -> list[list[str]]:
    """``names`` in order, in consecutive parts of ``size`` (the last may be shorter);
    ``size`` None: one part with every name. No names: no parts."""
    names = list(names)
    if size is None:
        return [names] if names else []
    if size < 1:
        raise ValueError(f"part size must be at least 1 (or None for one part), not {size}")
    return [names[i : i + size] for i in range(0, len(names), size)]


def part_of(parts: Sequence[Sequence[str]], name: str) -> int:
    """The index of the part that holds ``name``."""
    for index, part in enumerate(parts):
        if name in part:
            return index
    raise KeyError(f"{name!r} is in no part of {[list(p) for p in parts]}")
