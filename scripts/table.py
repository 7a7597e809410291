"""A paper's numeric table as CSV and HTML (repro.common.tables): the paper's
``repro.<paper>.figures.table_sections(documents, **options)`` on the rule's JSON inputs."""

import importlib

from _bootstrap import read_json_inputs, setup_logging

from repro.common import tables

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
figures = importlib.import_module(f"repro.{sm.params.paper}.figures")
title, sections = figures.table_sections(read_json_inputs(sm.input.docs), **dict(sm.params.options))
tables.write(sm.output.csv, sm.output.html, title, sections)
