"""Every relative link and ``#anchor`` in README.md and docs/*.md points to something that exists,
and README.md links every docs page (a newcomer starts from README.md).

Anchors follow GitHub's rule for headings: lower case, punctuation other than ``-`` and ``_``
dropped, spaces turned into ``-``, a repeated heading numbered ``-1``, ``-2``, ...
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
DOCUMENTS = [ROOT / "README.md", *DOCS]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """``text`` without its fenced code blocks (a link inside one is not a link)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown ``text``."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for match in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", _prose(text), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def broken_links(document: Path) -> list[str]:
    """The relative links of ``document`` whose file or heading anchor does not exist."""
    broken = []
    for target in LINK.findall(_prose(document.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (document.parent / path).resolve() if path else document
        if not file.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and file.suffix == ".md":
            if anchor not in heading_anchors(file.read_text(encoding="utf-8")):
                broken.append(f"{target} (no such heading)")
    return broken


def test_heading_anchors_follow_github():
    text = "# The audit: `trustlab audit`\n```\n# not a heading\n```\n## Limits\n## Limits\n"
    assert heading_anchors(text) == {"the-audit-trustlab-audit", "limits", "limits-1"}


def test_broken_links_finds_a_missing_file_and_heading(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n[ok](#title) [a](#nope) [b](missing.md) [c](https://x.org/y)\n"
        "```\n[in code](gone.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == ["#nope (no such heading)", "missing.md (no such file)"]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_relative_links_resolve(document):
    assert broken_links(document) == []


def test_readme_links_every_docs_page():
    linked = {
        (ROOT / target.partition("#")[0]).resolve()
        for target in LINK.findall(_prose((ROOT / "README.md").read_text(encoding="utf-8")))
    }
    assert [page.name for page in DOCS if page.resolve() not in linked] == []
