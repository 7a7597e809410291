"""Public APIs of the paper packages without import cost.

A paper's ``__init__`` is imported whenever anything of the paper is (the config check runs
at DAG time, before any job), so its exports are resolved on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping


def lazy_exports(package: str, names: Mapping[str, str]):
    """``__getattr__`` and ``__dir__`` for ``package`` exporting ``names`` (public name ->
    the submodule that defines it), each imported when first asked for."""

    def __getattr__(name: str):
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{names[name]}"), name)

    def __dir__():
        return sorted(names)

    return __getattr__, __dir__
