"""Every test that tests/README.md names exists: the list of value checks follows the code."""

import re
from pathlib import Path

README = Path(__file__).with_name("README.md")
NAMED = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def test_every_named_test_exists():
    root = README.parent.parent
    named = NAMED.findall(README.read_text())
    assert len(named) > 50
    missing = [
        f"{path}::{name}"
        for path, name in named
        if not (root / path).exists()
        or not re.search(rf"^def {name}\(", (root / path).read_text(), re.MULTILINE)
    ]
    assert missing == []
