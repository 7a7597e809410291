"""The seed keys of a paper's config section: every key whose name holds "seed", at any depth.

Shared by tests/common/test_seed_keys.py (every key of every paper names its test) and the
papers' own seed tests that parametrize over their keys."""

from __future__ import annotations

from collections.abc import Iterator

# mappings whose keys are names chosen in the config (a claim, a method, a data set...):
# a pattern stands for all of them with "<name>"
NAMED = frozenset(
    {"claims", "checks", "methods", "datasets", "real_datasets", "backbones", "tasks"}
)


def seed_paths(node, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every key named like a seed under ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = (*path, str(key))
            if "seed" in str(key):
                yield here
            yield from seed_paths(value, here)


def pattern(path: tuple[str, ...]) -> str:
    """The dotted key with each config-chosen name replaced by "<name>"."""
    return ".".join("<name>" if i and path[i - 1] in NAMED else key for i, key in enumerate(path))
