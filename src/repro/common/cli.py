"""What every paper's step CLIs share (``python -m repro.<paper>.<step> --help``): ``--config``,
a workflow config file whose ``papers.<paper>`` section the step reads, as its rule reads the
loaded config; and the log format of a step run by hand (a rule's script logs to its log file
through scripts/_bootstrap.py instead)."""

from __future__ import annotations

import argparse
import logging


def step_parser(
    description: str | None, *, paper: str, required: bool = True
) -> argparse.ArgumentParser:
    """A parser with ``--config``; ``required=False`` where some of a paper's steps (or
    subcommands) read no config: then :func:`paper_section` says that it is missing."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--config",
        required=required,
        help=f"a workflow config file (config/config.yaml, ...) with papers.{paper}",
    )
    return parser


def paper_section(config_path: str | None, paper: str) -> dict:
    """``papers.<paper>`` of a workflow config file (the code's defaults fill what it leaves
    out); a missing ``--config`` or section is a clear error, not a traceback."""
    import yaml

    if config_path is None:
        raise SystemExit(f"--config is required for this step (a config with papers.{paper})")
    with open(config_path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle) or {}
    section = (config.get("papers") or {}).get(paper)
    if section is None:
        raise SystemExit(f"{config_path} has no papers.{paper} section")
    return section


def log_to_stderr() -> None:
    """INFO and above on stderr, with the time and the logger's name (as the rules' logs)."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
