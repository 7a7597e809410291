from _bootstrap import setup_logging

from repro.sbd import study

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
cfg = dict(sm.params.cfg)
if sm.params.study == "noise_oracles":  # no method runs: the truth of the same graphs
    study.noise_oracles(cfg, sm.output.metrics)
else:
    greedy = {**sm.params.greedy, **cfg.pop("greedy", {})}  # the study's overrides win
    if sm.params.only:  # one method's job of a study whose methods share their graphs
        cfg["methods"] = [sm.params.only]
    getattr(study, sm.params.study)(cfg, dict(sm.params.methods), greedy, sm.output.metrics)
