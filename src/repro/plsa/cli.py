"""Shared pieces of PLSA's step CLIs (``python -m repro.plsa.<step> --help``): every step
reads ``papers.plsa`` of a workflow config file, as its rule reads it from Snakemake."""

from __future__ import annotations

import argparse
import logging

import yaml


def parser(description: str | None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--config", help="a workflow config file (config/config.yaml, ...)")
    return p


def plsa_section(path: str | None) -> dict:
    """``papers.plsa`` of the config file (the code's defaults fill what it leaves out)."""
    if path is None:
        raise SystemExit("--config is required for this step")
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)["papers"]["plsa"]


def start(args: argparse.Namespace) -> argparse.Namespace:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    return args
