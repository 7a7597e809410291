"""Checks of the sbd config that JSON Schema cannot express (cross-references)."""

from __future__ import annotations

from typing import Any


def check(config: dict[str, Any]) -> None:
    paper = config["papers"].get("sbd")
    if not paper or not paper.get("enabled"):
        return
