"""repro.common.schemas against the library it replaces in rules/common.smk
(snakemake.utils.validate): the same defaults filled in, the same first error."""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import jsonschema
import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate as snakemake_validate

from repro.common import schemas
from tests.conftest import ROOT

SCHEMAS = ROOT / "workflow" / "schemas"


def _sections(name: str):
    config = yaml.safe_load((ROOT / "config" / name).read_text())
    yield "config.schema.yaml", config
    for paper, section in config["papers"].items():
        yield f"{paper}.schema.yaml", section


def test_same_defaults_as_snakemake():
    name = "config.yaml"  # the others are validated by every dry run of the workflow tests
    for schema, data in _sections(name):
        ours, theirs = copy.deepcopy(data), copy.deepcopy(data)
        schemas.validate(ours, SCHEMAS / schema)
        snakemake_validate(theirs, str(SCHEMAS / schema))
        assert ours == theirs, schema
    # and the defaults were really filled in (a key the configs leave out)
    config = yaml.safe_load((ROOT / "config" / name).read_text())
    config.pop("threads", None)
    schemas.validate(config, SCHEMAS / "config.schema.yaml")
    assert config["threads"] == 1


@pytest.mark.parametrize(
    "path, value",
    [
        (("threads",), 0),
        (("papers", "qsurv", "seeds"), "zero"),
        (("papers", "qsurv", "training", "no_such_key"), 1),
        (("papers", "delta_mem", "claims", "memory_only_gain", "criterion", "test"), "wins"),
    ],
)
def test_same_error_as_snakemake(path, value):
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    node, schema = config, "config.schema.yaml"
    if path[0] == "papers":
        node, schema, path = config["papers"][path[1]], f"{path[1]}.schema.yaml", path[2:]
    data = node
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError) as ours:
        schemas.validate(copy.deepcopy(data), SCHEMAS / schema)
    with pytest.raises(WorkflowError) as theirs:
        snakemake_validate(copy.deepcopy(data), str(SCHEMAS / schema))
    assert str(ours.value) in str(theirs.value)
    assert ours.value.message


def test_the_config_checks_load_without_heavy_libraries():
    """Every Snakemake start (each dry run, each SLURM job) imports every paper's config
    check; scipy.stats alone took 0.9 of the 1.2 CPU-s those imports cost."""
    checks = (ROOT / "src" / "repro").glob("*/configcheck.py")
    papers = sorted(p.parent.name for p in checks if p.parent.name != "common")
    code = (
        "import importlib, sys\n"
        f"for paper in {papers!r}:\n"
        "    importlib.import_module(f'repro.{paper}.configcheck')\n"
        "heavy = ('scipy.stats', 'torch', 'sklearn', 'pandas')\n"
        "heavy = sorted(m for m in heavy if m in sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert len(papers) == 8
    assert result.returncode == 0, result.stderr[-2000:]
