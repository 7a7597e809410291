from _bootstrap import read_json_inputs, setup_logging

from repro.r3_adapter.claims import check_claims

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = {d["method"]: d for d in read_json_inputs(sm.input.metrics)}
runs = {d["method"]: d for d in read_json_inputs(sm.input.runs)}
check_claims(dict(sm.params.claims), dict(sm.params.checks), metrics, runs, sm.output.claims)
