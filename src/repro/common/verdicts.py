"""The words a claim or a check can end in (see :mod:`repro.common.claims`)."""

REPRODUCED = "reproduced"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
# a control of the claim failed in this run: the setup cannot show the effect (positive
# control not reproduced) or the statistic does not separate it from its absence (negative
# control reproduced); the claim's own verdict is kept beside it
UNINFORMATIVE = "uninformative"
NOT_REPRODUCED = "not reproduced"  # a value the claim needs is missing: no verdict possible
NOT_TESTED = "not tested at this scale"
PASSED = "passed"
FAILED = "failed"
DECIDED = (REPRODUCED, CONTRADICTED)
