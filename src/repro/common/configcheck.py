"""Shared pieces of the per-paper config cross-checks (src/repro/<paper>/configcheck.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class ConfigError(ValueError):
    """A config that passes the schema but is inconsistent; the message names the key."""


def check_claim_kinds(paper: str, claims: dict[str, Any], kinds: Iterable[str]) -> None:
    """Each paper handles its own claim kinds: stop before any job, not in the claims job."""
    kinds = tuple(kinds)
    for cid, claim in claims.items():
        if claim["kind"] not in kinds:
            raise ConfigError(
                f"papers.{paper}.claims.{cid}.kind: {claim['kind']!r} is not a "
                f"{paper} claim kind; choose from {kinds}"
            )
