"""Full-scale data sets: downloadable RGB-D scenes become pairs; licence-gated ones stop with
the instructions the config gives (they cannot be fetched by a rule)."""

from __future__ import annotations

import logging
from pathlib import Path

from repro.common.io import write_npz
from repro.r3_adapter.sevenscenes import make_pairs

log = logging.getLogger(__name__)


class GatedDataError(RuntimeError):
    """A licence-gated data set that is not on this machine, or has no loader yet."""


def write_pairs(name: str, spec: dict, archives: list[str], resolution, out: str) -> None:
    if spec["format"] == "gated":
        path = spec.get("path")
        if not path or not Path(path).exists():
            raise GatedDataError(
                f"{name} is licence-gated and cannot be downloaded by the workflow: "
                f"{spec['instructions']} Then set "
                f"papers.r3_adapter.full_scale.datasets.{name}.path."
            )
        raise GatedDataError(
            f"{name}: found {path}, but its protocol ({spec['task']}) has no loader yet; "
            "see README '3R-Adapter in this workflow', what is left"
        )
    arrays = make_pairs(
        archives, tuple(resolution), spec.get("pairs", 64), spec.get("frame_gap", 10)
    )
    log.info("%s: %d pairs at %s", name, len(arrays["T21"]), tuple(resolution))
    write_npz(out, **arrays)
