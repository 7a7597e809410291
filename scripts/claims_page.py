from pathlib import Path

from _bootstrap import setup_logging

from repro.common.inventory import figure_inventory
from repro.common.io import read_json, write_text
from repro.common.ledger_page import claims_page

sm = snakemake  # noqa: F821 (injected by Snakemake)
log = setup_logging(sm)
docs = Path(sm.params.docs)
inventory = figure_inventory(docs.read_text(encoding="utf-8")) if docs.exists() else []
write_text(sm.output.page, claims_page(sm.params.title, read_json(sm.input.claims), inventory))
log.info("wrote %s", sm.output.page)
