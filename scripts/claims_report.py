from _bootstrap import setup_logging

from repro.common.io import read_json, write_text
from repro.common.ledger import claims_markdown, claims_rst, summary_line

sm = snakemake  # noqa: F821 (injected by Snakemake)
log = setup_logging(sm)
claims = dict(sm.input.items())  # the papers that have run, by id
titles = dict(zip(sm.params.papers, sm.params.titles, strict=True))
papers = [(titles[p], read_json(path)) for p, path in claims.items()]
pages = [f"results/{p}/claims.html" for p in claims]
not_run = [titles[p] for p in sm.params.papers if p not in claims]
write_text(sm.output.markdown, claims_markdown(papers, not_run))
write_text(sm.output.rst, claims_rst(papers, pages, not_run))
log.info("%s", summary_line(papers, not_run))
log.info("wrote %s and %s", sm.output.markdown, sm.output.rst)
