"""repro.qsurv.configcheck on the real embedded config, mutated: every claim must carry its
record (registration, controls), and every name a claim or its controls use must exist."""

import copy

import pytest

from repro.common.configcheck import ConfigError
from repro.qsurv.configcheck import check
from tests.conftest import set_dotted
from tests.qsurv.test_claims import CONFIGS

CLAIMS = "papers.qsurv.claims"


def test_the_shipped_configs_pass():
    for config in CONFIGS.values():
        check(copy.deepcopy(config))


def _drop(path):
    def mutate(config):
        *parents, last = path.split(".")
        node = config
        for key in parents:
            node = node[key]
        del node[last]

    return mutate


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            _drop(f"{CLAIMS}.competitive_ctd_flchain.controls"),
            "competitive_ctd_flchain.controls: missing",
        ),
        (_drop(f"{CLAIMS}.hazard_vs_discrete.registered"), "hazard_vs_discrete.registered"),
        (
            lambda c: set_dotted(
                c, f"{CLAIMS}.competitive_ctd_flchain.controls.negative.set.method", "oracle"
            ),
            "competitive_ctd_flchain.controls.negative.set.method: 'oracle'",
        ),
        (
            lambda c: set_dotted(c, f"{CLAIMS}.gl_converges_faster.families", ["weibull"]),
            "gl_converges_faster.families: 'weibull'",
        ),
        (
            lambda c: set_dotted(c, "papers.qsurv.methods.kaplan_meier", {"family": "coxph"}),
            "papers.qsurv.methods.kaplan_meier: the name is reserved",
        ),
    ],
    ids=["no-controls", "no-registration", "oracle-on-real-data", "family", "reserved-name"],
)
def test_a_bad_claim_record_names_the_key(mutate, message):
    config = copy.deepcopy(CONFIGS["config"])
    mutate(config)
    with pytest.raises(ConfigError, match=message):
        check(config)
