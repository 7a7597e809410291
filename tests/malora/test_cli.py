"""Every step a MaLoRA rule runs has a ``python -m repro.malora.<module> [step] --help`` entry,
and the package has no import circle: the step entry points import the studies, never the
reverse, and every module imports on its own."""

import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, assert_steps_answer_help

PACKAGE = ROOT / "src" / "repro" / "malora"
STEPS = [
    "steps sweep",
    "steps linear",
    "steps digits",
    "steps full",
    "steps pixels",
    "steps tokenise",
    "evaluate",
    "figures",
    "claims",
]


def test_every_step_answers_help():
    usage = assert_steps_answer_help("malora", STEPS)
    assert all("--" in text for text in usage.values())


def _imports(path: Path) -> set[str]:
    """The repro.malora modules a file imports anywhere (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "repro.malora":
                found |= {f"repro.malora.{a.name}" for a in node.names}
            elif node.module.startswith("repro.malora."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("repro.malora.")}
    return found


def _modules() -> list[str]:
    return sorted(f"repro.malora.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def test_no_import_circle_in_the_package():
    graph = {
        m: _imports(PACKAGE / f"{m.rsplit('.', 1)[1]}.py") & set(_modules()) for m in _modules()
    }
    assert "repro.malora.steps" not in set().union(*graph.values())  # nothing imports steps
    state: dict[str, int] = {}

    def visit(module, path):
        if state.get(module) == 1:
            raise AssertionError(f"import circle: {' -> '.join([*path, module])}")
        if state.get(module) == 2:
            return
        state[module] = 1
        for dep in sorted(graph[module]):
            visit(dep, [*path, module])
        state[module] = 2

    for module in graph:
        visit(module, [])


def test_every_module_imports_alone_in_a_fresh_interpreter():
    """One fresh interpreter; before each module, every repro.malora module is forgotten, so
    each is imported first, on its own (third-party packages stay loaded: they cannot close
    a circle through this package)."""
    probe = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]:\n"
        "    for loaded in [m for m in sys.modules if m.startswith('repro.malora')]:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *_modules()],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
