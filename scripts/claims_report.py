from _bootstrap import setup_logging

from repro.common.io import read_json, write_text
from repro.common.ledger import claims_markdown, claims_rst, summary_line
from repro.common.ledger_page import claims_page

sm = snakemake  # noqa: F821 (injected by Snakemake)
log = setup_logging(sm)
papers = [
    (title, read_json(path)) for title, path in zip(sm.params.titles, sm.input.claims, strict=True)
]
pages = [sm.output[paper] for paper in sm.params.papers]
for page, (title, entries) in zip(pages, papers, strict=True):
    write_text(page, claims_page(title, entries))
write_text(sm.output.markdown, claims_markdown(papers))
write_text(sm.output.rst, claims_rst(papers, pages))
log.info("%s", summary_line(papers))
log.info("wrote %s, %s and the page of each paper", sm.output.markdown, sm.output.rst)
