"""Every rule that runs code names a conda env that exists, parses, and pins what it imports.

The check is static (conda cannot create environments here): rules are read from
rules/*.smk, the code a rule runs is followed from its script through the ``repro``
modules it imports, and every third-party import must map to a distribution pinned with
``==`` (pip) or ``=`` (conda) in the rule's env file.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
RULE = re.compile(r"^rule (\w+):\n((?:[ \t]+.*\n|\n)*)", re.M)
IGNORED = {"repro", "_bootstrap", "snakemake"}
# import name -> distribution, where the distribution metadata does not say it
CONDA_NAMES = {"yaml": "pyyaml", "sklearn": "scikit-learn", "sksurv": "scikit-survival"}


def _rules():
    for path in sorted((ROOT / "rules").glob("*.smk")):
        for name, body in RULE.findall(path.read_text()):
            conda = re.search(r'conda:\s*\n\s*"([^"]+)"', body)
            script = re.search(r'script:\s*\n\s*"([^"]+)"', body)
            yield name, conda and conda.group(1), script and script.group(1)


def _module_file(module: str) -> Path | None:
    parts = module.split(".")
    for candidate in (
        (ROOT / "src" / Path(*parts)).with_suffix(".py"),
        ROOT / "src" / Path(*parts) / "__init__.py",
    ):
        if candidate.exists():
            return candidate
    return None


def _imports(path: Path, seen: set[Path]) -> set[str]:
    """Top-level names of third-party imports of a file and the repro modules it imports."""
    if path in seen:
        return set()
    seen.add(path)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            top = name.split(".")[0]
            if top == "repro":
                module_file = _module_file(name)
                if module_file:
                    found |= _imports(module_file, seen)
            elif top not in IGNORED and top not in sys.stdlib_module_names:
                found.add(top)
    return found


def _pins(env: dict) -> dict[str, str]:
    pins = {}
    for dep in env["dependencies"]:
        specs = dep["pip"] if isinstance(dep, dict) else [dep]
        for spec in specs:
            match = re.match(r"^([A-Za-z0-9_.\-]+)\s*(==|=)\s*([\w.+]+)$", spec)
            if match:
                pins[match.group(1).lower().replace("_", "-")] = match.group(3)
    return pins


def _distribution(module: str) -> str:
    if module in CONDA_NAMES:
        return CONDA_NAMES[module]
    dists = importlib.metadata.packages_distributions().get(module, [module])
    return dists[0].lower().replace("_", "-")


RULES = [r for r in _rules() if r[2]]


def test_rules_were_found():
    assert len(RULES) >= 8


@pytest.mark.parametrize(("rule", "env_file", "script"), RULES, ids=[r[0] for r in RULES])
def test_rule_env_pins_what_its_code_imports(rule, env_file, script):
    assert env_file, f"rule {rule} runs a script but has no conda: env"
    env_path = (ROOT / "rules" / env_file).resolve()
    env = yaml.safe_load(env_path.read_text())
    assert env["channels"] == ["conda-forge", "nodefaults"], env_path
    pins = _pins(env)
    assert "python" in pins
    imports = _imports((ROOT / "rules" / script).resolve(), set())
    missing = sorted(m for m in imports if _distribution(m) not in pins)
    assert not missing, f"{env_path.name} does not pin {missing} (imported by rule {rule})"
    for name, version in pins.items():  # the pins agree with the venv the tests run in
        if name in ("python", "pip"):
            continue
        installed = importlib.metadata.version(name)
        assert installed.split("+")[0] == version, (
            f"{env_path.name}: {name} {version} vs {installed}"
        )
