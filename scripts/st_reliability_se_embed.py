from _bootstrap import setup_logging

from repro.st_reliability import configs
from repro.st_reliability.se_embed import SEEmbedConfig, embed_cells
from repro.st_reliability.se_encoder import SEFiles

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
dataset = dict(sm.params.dataset)
se = dict(sm.params.se600m)
files = SEFiles(
    checkpoint=sm.input.checkpoint,
    protein_embeddings=sm.input.protein_embeddings,
    config=sm.input.get("config"),
)
cfg = SEEmbedConfig(
    batch_size=se.get("batch_size"),
    seed=se.get("seed", 0),
    min_cells=dataset.get("preprocessing", {}).get("min_cells", 20),
)
sources = configs.line_sources(dataset, dict(sm.input.items()))
embed_cells(
    sm.input.cells,
    sources,
    files,
    cfg,
    embeddings_out=sm.output.embeddings,
    record_out=sm.output.record,
    device=sm.params.device,
)
