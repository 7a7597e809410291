from pathlib import Path

from _bootstrap import setup_logging

from repro.st_reliability import configs
from repro.st_reliability.train import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
log = setup_logging(sm)
out = Path(sm.output.models)
out.mkdir(parents=True, exist_ok=True)
architecture = configs.ModelConfig(**sm.params.architecture)
training = configs.training(dict(sm.params.training))
for name, spec in dict(sm.params.models).items():
    log.info("training %s (seed %s)", name, sm.wildcards.seed)
    spec = dict(spec)
    decoder = spec.pop("se_decoder", None)  # se600m models only
    se = {}
    if decoder is not None:
        se = configs.se_inputs(decoder, sm.input.se_embeddings, sm.input.se_record)
    run(
        sm.input.cells,
        configs.Variant(**spec),
        architecture,
        training,
        seed=int(sm.wildcards.seed),
        model_out=str(out / f"{name}.pt"),
        record_out=str(out / f"{name}.json"),
        device=sm.params.device,
        threads=sm.threads,
        **se,
    )
