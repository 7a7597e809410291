from _bootstrap import read_json_inputs, setup_logging

from repro.common.io import write_json
from repro.delta_mem.fullmab import summarise_shards

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
docs = [
    d | {"key": k} for d, k in zip(read_json_inputs(sm.input.shards), sm.params.labels, strict=True)
]
write_json(sm.output.metrics, {"backbone": sm.wildcards.backbone, "score": summarise_shards(docs)})
