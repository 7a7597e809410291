"""repro.common.parts: names cut into the parts one job each handles."""

import itertools

import pytest

from repro.common.parts import part_of, split_into_parts

NAMES = [f"m{i}" for i in range(7)]


def _reference(names, size):
    """The naive cut: names taken one by one, a new part every ``size`` names."""
    parts = []
    for name in names:
        if not parts or len(parts[-1]) == size:
            parts.append([])
        parts[-1].append(name)
    return parts


@pytest.mark.parametrize("size", [1, 2, 3, 6, 7, 8, 100])
def test_parts_equal_a_naive_cut_and_keep_the_order(size):
    parts = split_into_parts(NAMES, size)
    assert parts == _reference(NAMES, size)
    assert list(itertools.chain.from_iterable(parts)) == NAMES
    assert all(len(p) == size for p in parts[:-1]) and 1 <= len(parts[-1]) <= size
    for index, part in enumerate(parts):
        for name in part:
            assert part_of(parts, name) == index


def test_no_size_is_one_part_and_no_names_no_parts():
    assert split_into_parts(NAMES, None) == [NAMES]
    assert split_into_parts((n for n in NAMES), 3) == [NAMES[:3], NAMES[3:6], NAMES[6:]]
    assert split_into_parts([], None) == [] and split_into_parts([], 2) == []


def test_bad_size_and_unknown_name_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        split_into_parts(NAMES, 0)
    with pytest.raises(KeyError, match="m9"):
        part_of(split_into_parts(NAMES, 2), "m9")
