"""scripts/_bootstrap.py puts this checkout's src/ first, also when Snakemake's script
preamble has appended it after site-packages already (where an editable install of another
checkout sharing the venv, e.g. the main tree of a git worktree, would otherwise win)."""

import subprocess
import sys

from tests.conftest import ROOT


def test_the_checkouts_own_src_comes_first():
    src, scripts = ROOT / "src", ROOT / "scripts"
    code = (
        "import sys; "
        f"sys.path.insert(0, '/elsewhere/src'); sys.path.append({str(src)!r}); "
        f"sys.path.insert(0, {str(scripts)!r}); "
        "import _bootstrap; print(sys.path[0])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(src)
