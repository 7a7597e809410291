"""Every claim of the three shipped configs carries its record (issue 34): the date its
criterion was written, its controls (or why none can exist) and its margin, in the config.

Read from the YAML files themselves, not through a paper's config check, so that a paper
whose check forgot the record still fails here.
"""

from __future__ import annotations

import re

import pytest
import yaml

from repro.common.claims import PAIRED_TESTS
from tests.conftest import ROOT

CONFIGS = ("config/config.yaml", "config/test.yaml", "config/full.yaml")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _claims(config: str):
    papers = yaml.safe_load((ROOT / config).read_text())["papers"]
    for paper, section in papers.items():
        for cid, spec in ((section or {}).get("claims") or {}).items():
            yield f"{config}: papers.{paper}.claims.{cid}", spec


def _no_control(entry: dict) -> list[str]:
    return [] if str(entry["none"]).strip() else ["the reason no control can exist"]


def _missing(spec: dict) -> list[str]:
    """What a claim's record lacks; [] when it is complete."""
    missing = []
    if not DATE.match(str(spec.get("registered", ""))):
        missing.append("registered date")
    for revision in spec.get("revised") or []:
        if not (DATE.match(str(revision.get("date", ""))) and revision.get("why")):
            missing.append("a revision's date and why")
    if spec["kind"] == "not_tested":
        return missing if spec.get("reason") else [*missing, "reason"]
    controls = spec.get("controls")
    if controls is None:
        missing.append("controls")
    elif "none" in controls:
        missing += _no_control(controls)
    else:
        for side in ("positive", "negative"):
            control = controls.get(side)
            if control is None:
                missing.append(f"{side} control")
            elif "none" in control:
                missing += _no_control(control)
            elif not (
                str(control.get("about", "")).strip() and isinstance(control.get("set"), dict)
            ):
                missing.append(f"{side} control's about and set")
    criterion = spec.get("criterion") or {}
    if criterion.get("test") in PAIRED_TESTS and "delta" not in criterion:
        missing.append("criterion.delta (the margin)")
    if "op" in criterion and "threshold" not in criterion:
        missing.append("criterion.threshold")
    return missing


@pytest.mark.parametrize("config", CONFIGS)
def test_every_claim_carries_its_record(config):
    claims = dict(_claims(config))
    assert len(claims) > 50, f"{config}: only {len(claims)} claims found"
    incomplete = {key: gaps for key, spec in claims.items() if (gaps := _missing(spec))}
    assert not incomplete, incomplete


@pytest.mark.parametrize(
    ("change", "gap"),
    [
        (lambda s: s.pop("registered"), "registered date"),
        (lambda s: s.update(registered="yesterday"), "registered date"),
        (lambda s: s.pop("controls"), "controls"),
        (lambda s: s["controls"].pop("negative"), "negative control"),
        (lambda s: s["controls"]["positive"].pop("about"), "positive control's about"),
        (lambda s: s["controls"].update(negative={"none": ""}), "the reason no control"),
        (lambda s: s.update(controls={"none": " "}), "the reason no control can exist"),
        (lambda s: s["criterion"].pop("delta"), "criterion.delta (the margin)"),
        (lambda s: s.update(revised=[{"date": "2026-12-01", "what": "x"}]), "a revision's"),
    ],
)
def test_an_incomplete_record_is_found(change, gap):
    spec = {
        "kind": "comparison",
        "registered": "2026-11-29",
        "controls": {
            "positive": {"about": "the oracle", "set": {"method": "oracle"}},
            "negative": {"about": "B against itself", "set": {"method": "b"}},
        },
        "criterion": {"test": "beats", "delta": 0.01, "higher_is_better": True},
    }
    assert _missing(spec) == []
    change(spec)
    assert any(g.startswith(gap) for g in _missing(spec)), _missing(spec)
