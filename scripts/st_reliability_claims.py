from _bootstrap import read_json_inputs, setup_logging

from repro.st_reliability.claims import check_claims

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = dict(zip(sm.params.datasets, read_json_inputs(sm.input.metrics), strict=True))
prepared = dict(zip(sm.params.datasets, read_json_inputs(sm.input.prepared), strict=True))
control = read_json_inputs(sm.input.swap_control)[0]
claims, checks = dict(sm.params.claims), dict(sm.params.checks)
check_claims(claims, checks, metrics, prepared, sm.output.claims, control)
