from pathlib import Path

from _bootstrap import setup_logging

from repro.common.claims import claims_markdown
from repro.common.io import read_json

sm = snakemake  # noqa: F821 (injected by Snakemake)
log = setup_logging(sm)
papers = [
    (paper, read_json(path)) for paper, path in zip(sm.params.papers, sm.input.claims, strict=True)
]
Path(sm.output.markdown).write_text(claims_markdown(papers))
log.info("wrote %s", sm.output.markdown)
