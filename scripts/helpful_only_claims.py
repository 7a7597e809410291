from _bootstrap import read_json_inputs, setup_logging

from repro.helpful_only.claims import check_claims

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
summary = read_json_inputs(sm.input.summary)[0]
full = read_json_inputs(sm.input.full)
claims, checks = dict(sm.params.claims), dict(sm.params.checks)
check_claims(claims, checks, summary, sm.output.claims, full[0] if full else None)
