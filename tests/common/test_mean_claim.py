"""repro.common.claims.mean_claim: a threshold on the mean over seeds with Student's t
interval over them, three-way, against scipy."""

import pytest
from scipy import stats

from repro.common.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    mean_claim,
)

SPEC = {"claim": "the ratio stays below one half", "criterion": {"op": "<", "threshold": 0.5}}


def _interval(values):
    mean = sum(values) / len(values)
    return stats.t.interval(0.95, df=len(values) - 1, loc=mean, scale=stats.sem(values))


@pytest.mark.parametrize(
    ("values", "verdict"),
    [
        ([0.40, 0.41, 0.42], REPRODUCED),  # the whole interval below 0.5
        ([0.60, 0.62, 0.58], CONTRADICTED),  # the whole interval above
        ([0.30, 0.45, 0.62], INCONCLUSIVE),  # it straddles 0.5
    ],
)
def test_verdict_and_interval_against_scipy(values, verdict):
    claim = mean_claim("c", SPEC, dict(enumerate(values)))
    assert claim.verdict == verdict
    assert claim.measured == pytest.approx(sum(values) / len(values))
    assert claim.interval == pytest.approx(_interval(values))


def test_the_other_direction_and_missing_seeds():
    spec = {"claim": "a drop of at least 0.3", "criterion": {"op": ">=", "threshold": 0.3}}
    assert mean_claim("c", spec, {0: 0.9, 1: 0.91}).verdict == REPRODUCED
    assert mean_claim("c", spec, {0: 0.9, 1: None}).verdict == NOT_REPRODUCED
    one = mean_claim("c", spec, {0: 0.9})
    assert one.verdict == NOT_REPRODUCED and "two seeds" in one.details
