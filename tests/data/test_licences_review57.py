"""The wheel's licence metadata covers the data it ships (review 57).

pyproject.toml said ``license = "MIT"`` while the wheel carried GPL-2.0+ (chile), LGPL-2.0+
(logan), CC-BY-4.0 and Apache-2.0 files, without the GPL and LGPL texts. Every licence a shipped
file's note declares must now be in the project's licence expression, the texts must be shipped
and named in ``license-files``, and every bundled dataset must have a note.
"""

from __future__ import annotations

import glob
import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "trustlab"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

# How the notes name a licence -> its SPDX identifier.
PHRASES = {
    r"GNU GPL \(>= 2\)": "GPL-2.0-or-later",
    r"GNU LGPL \(>= 2\)": "LGPL-2.0-or-later",
    r"CC BY 4\.0": "CC-BY-4.0",
    r"Apache(-2\.0| License 2\.0| License, Version 2\.0)": "Apache-2.0",
    r"CC0 1\.0": "CC0-1.0",
    r"\bMIT\b": "MIT",
}
NOTES = [
    PACKAGE / "data" / "bundled" / "LICENSES.md",
    PACKAGE / "safety" / "data" / "SOURCES.md",
    *sorted((PACKAGE / "agents" / "data").glob("SOURCE*.md")),
    *sorted((PACKAGE / "agents" / "data" / "policies").glob("SOURCE*.md")),
    *sorted((PACKAGE / "watermark" / "data").glob("NOTICE*")),
]


def _declared() -> set[str]:
    """SPDX ids of every licence a shipped file's note declares; a licence line naming none of
    the known phrases fails (a new licence must be added here and to pyproject.toml)."""
    found = set()
    for note in NOTES:
        for line in note.read_text(encoding="utf-8").splitlines():
            if "Licence:" not in line and "licensed under" not in line.lower():
                continue
            ids = {spdx for phrase, spdx in PHRASES.items() if re.search(phrase, line)}
            assert ids, f"{note.name}: a licence line naming no known licence: {line!r}"
            found |= ids
    questions = json.loads((PACKAGE / "watermark" / "data" / "questions.json").read_text())
    found.add(questions["licence"])
    return found


def test_every_declared_licence_is_in_the_project_licence_expression():
    expression = set(PYPROJECT["license"].split(" AND "))
    declared = _declared()
    # the data notes name all of these (the old "MIT" alone left five out)
    assert {"GPL-2.0-or-later", "LGPL-2.0-or-later", "CC-BY-4.0", "Apache-2.0"} <= declared
    assert declared <= expression, sorted(declared - expression)


def test_the_gpl_and_lgpl_texts_ship_beside_the_data_and_are_licence_files():
    bundled = PACKAGE / "data" / "bundled"
    assert "GNU GENERAL PUBLIC LICENSE" in (bundled / "LICENSE-GPL-2.0").read_text()
    assert "Version 2, June 1991" in (bundled / "LICENSE-GPL-2.0").read_text()
    assert "GNU LIBRARY GENERAL PUBLIC LICENSE" in (bundled / "LICENSE-LGPL-2.0").read_text()
    notes = (bundled / "LICENSES.md").read_text()
    assert "`LICENSE-GPL-2.0`" in notes and "`LICENSE-LGPL-2.0`" in notes
    listed = {
        Path(path).resolve()
        for pattern in PYPROJECT["license-files"]
        for path in glob.glob(str(ROOT / pattern))
    }
    for pattern in PYPROJECT["license-files"]:  # a stale pattern would fail the build
        assert glob.glob(str(ROOT / pattern)), pattern
    assert (ROOT / "LICENSE").resolve() in listed
    assert {
        (bundled / "LICENSE-GPL-2.0").resolve(),
        (bundled / "LICENSE-LGPL-2.0").resolve(),
    } <= listed


def test_every_bundled_data_file_has_a_note():
    bundled = PACKAGE / "data" / "bundled"
    notes = (bundled / "LICENSES.md").read_text()
    for path in bundled.iterdir():
        if not path.name.startswith("LICENSE"):
            assert f"{path.name}" in notes, path.name
