"""Short general texts for the transfer tests: the openings of Python's pydoc topics (offline,
varied English and code), imported by the test modules of this folder."""

from __future__ import annotations

from pydoc_data.topics import topics


def pydoc_texts(start: int, stop: int, width: int = 120) -> list[str]:
    """The first ``width`` characters of the pydoc topics ``start:stop`` (sorted by key), with
    rule lines dropped and whitespace collapsed."""
    out = []
    for key in sorted(topics)[start:stop]:
        lines = [line for line in topics[key].splitlines() if line.strip("*=- ")]
        out.append(" ".join(" ".join(lines).split())[:width])
    return out
