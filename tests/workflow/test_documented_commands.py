"""Every `snakemake ...` command the docs show in a fenced block parses and builds its DAG.

Each command runs as written plus `-n`, from the repository root (its relative paths are the
repository's) with `--directory` in a temporary folder, so a command that no longer parses
(`--configfile FILE target` reads the target as a second config file) fails here.
"""

from __future__ import annotations

import re
import shlex
import shutil

import pytest

from tests.conftest import ROOT, snakemake

pytestmark = pytest.mark.workflow

DOCS = [ROOT / "README.md", ROOT / "config" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)


def documented_commands() -> dict[str, str]:
    """Command -> where it is documented, for every line of a fenced block that runs
    snakemake (continuation lines joined, a trailing `# comment` dropped)."""
    commands = {}
    for doc in DOCS:
        text = doc.read_text()
        for block in FENCED.finditer(text):
            line_number = text.count("\n", 0, block.start()) + 2
            for line in block.group(1).replace("\\\n", " ").splitlines():
                words = shlex.split(line, comments=True)
                if words[:1] == ["snakemake"]:
                    commands.setdefault(shlex.join(words), f"{doc.relative_to(ROOT)}:{line_number}")
    return commands


COMMANDS = documented_commands()


def test_the_docs_show_the_commands_a_user_types():
    assert len(COMMANDS) >= 5, COMMANDS
    assert any("downloads" in c and "--configfile" in c for c in COMMANDS), COMMANDS
    assert any("--report" in c for c in COMMANDS), COMMANDS


@pytest.mark.parametrize("command", sorted(COMMANDS), ids=lambda c: c.removeprefix("snakemake "))
def test_a_documented_command_dry_runs(tmp_path, command):
    args = shlex.split(command)[1:]
    if "--use-conda" in args and not shutil.which("conda"):
        pytest.skip("no conda on this machine")
    (tmp_path / "results").mkdir()  # as after a run (the report is written there)
    result = snakemake(*args, "-n", workdir=tmp_path, check=False, timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{COMMANDS[command]}: {command}\n{output[-3000:]}"
