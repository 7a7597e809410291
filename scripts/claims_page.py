from _bootstrap import setup_logging

from repro.common.io import read_json, write_text
from repro.common.ledger_page import claims_page

sm = snakemake  # noqa: F821 (injected by Snakemake)
log = setup_logging(sm)
write_text(sm.output.page, claims_page(sm.params.title, read_json(sm.input.claims)))
log.info("wrote %s", sm.output.page)
