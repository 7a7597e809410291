"""Shared pieces of the per-paper config cross-checks (src/repro/<paper>/configcheck.py)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any


class ConfigError(ValueError):
    """A config that passes the schema but is inconsistent; the message names the key."""


CLAIM_GROUPS = ("claims", "checks")


def check_claim_specs(
    paper: str,
    section: Mapping[str, Any],
    kinds: Iterable[str],
    references: Mapping[str, Collection[str]] | None = None,
    *,
    references_of=None,
) -> None:
    """Every entry of ``papers.<paper>.claims`` and ``.checks`` names a kind the paper
    handles, and every name it refers to exists — before any job, not in the claims job.

    ``references`` maps a claim field (``dataset``, ``method``, ``baselines``, ``metric``,
    ``nodes``, ...) to the values it may take; a list-valued field is checked item by item.
    ``references_of(spec)``, when given, returns further such constraints that depend on the
    entry (e.g. the methods run on the entry's data set). ``not_tested`` entries may name
    anything: they are not computed.

    Every claim (not a check) says when its criterion was written (``registered``) and, unless
    it is not tested, names its controls (``controls``, :mod:`repro.common.controls`); a
    control's replaced keys must name configured things too.
    """
    kinds = tuple(kinds)
    for group in CLAIM_GROUPS:
        for cid, spec in section.get(group, {}).items():
            key = f"papers.{paper}.{group}.{cid}"
            if spec["kind"] not in kinds:
                raise ConfigError(
                    f"{key}.kind: {spec['kind']!r} is not a {paper} claim kind; choose from {kinds}"
                )
            if group == "claims":
                _require_record(key, spec)
            if spec["kind"] == "not_tested":
                continue
            _check_references(key, spec, references, references_of)
            for side, entry in (spec.get("controls") or {}).items():
                if isinstance(entry, Mapping) and "set" in entry:
                    merged = {**spec, **entry["set"]}
                    _check_references(
                        f"{key}.controls.{side}.set", merged, references, references_of
                    )


def _require_record(key: str, spec: Mapping[str, Any]) -> None:
    if "registered" not in spec:
        raise ConfigError(f"{key}.registered: missing (the date the criterion was written)")
    if spec["kind"] != "not_tested" and "controls" not in spec:
        raise ConfigError(
            f"{key}.controls: missing: name a positive and a negative control of this run, "
            "or write {none: reason} (config/README.md#controls)"
        )


def _check_references(key, spec, references, references_of) -> None:
    allowed = dict(references or {})
    if references_of is not None:
        allowed.update(references_of(spec))
    for field, names in allowed.items():
        values = spec.get(field, [])
        for value in values if isinstance(values, list) else [values]:
            if value not in names:
                raise ConfigError(
                    f"{key}.{field}: {value!r} is not configured; "
                    f"choose from {sorted(names, key=str)}"
                )
