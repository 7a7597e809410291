from _bootstrap import setup_logging

from repro.common.io import read_json, write_text
from repro.common.ledger import claims_markdown, claims_rst, summary_line

sm = snakemake  # noqa: F821 (injected by Snakemake)
log = setup_logging(sm)
papers = [
    (title, read_json(path)) for title, path in zip(sm.params.titles, sm.input.claims, strict=True)
]
write_text(sm.output.markdown, claims_markdown(papers))
write_text(sm.output.rst, claims_rst(papers))
log.info("%s", summary_line(papers))
log.info("wrote %s and %s", sm.output.markdown, sm.output.rst)
