from _bootstrap import read_json_inputs, setup_logging

from repro.r3_adapter.claims import check_claims, full_documents

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = {d["method"]: d for d in read_json_inputs(sm.input.metrics)}
runs = {d["method"]: d for d in read_json_inputs(sm.input.runs)}
full = full_documents(read_json_inputs(sm.input.full))
claims, checks = dict(sm.params.claims), dict(sm.params.checks)
check_claims(claims, checks, metrics, runs, sm.output.claims, full, dict(sm.params.sanity))
