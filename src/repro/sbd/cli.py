"""What SBD's step modules share on the command line (``python -m repro.sbd.<step> --help``):
``--config``, a workflow config file whose ``papers.sbd`` section the step reads, as its
rule reads the loaded config."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import yaml


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--config", default="config/config.yaml", help="workflow config file")
    return p


def section(args: argparse.Namespace) -> dict:
    """papers.sbd of the config file, and logging to stderr."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    return yaml.safe_load(Path(args.config).read_text())["papers"]["sbd"]
