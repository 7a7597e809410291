"""benchmarks/mutation.yaml (what `make mutation` mutates) names modules and test files that
exist, and loads (each anchor once)."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_every_listed_module_and_test_file_exists():
    targets = yaml.safe_load((ROOT / "benchmarks" / "mutation.yaml").read_text())
    listed = [(module, spec) for paper in targets.values() for module, spec in paper.items()]
    assert listed
    for module, spec in listed:
        assert (ROOT / module).is_file(), module
        assert spec["tests"] and all((ROOT / t).is_file() for t in spec["tests"]), module
        prefix = "repro." + module.removeprefix("src/repro/").removesuffix(".py").replace("/", ".")
        assert all(name.startswith(prefix + ".") for name in spec.get("equivalent") or {}), module
