"""The chile description explains every code its region and education columns hold (the audit's
tables and figures show the codes; `trustlab data show chile` explained the vote codes only)."""

from __future__ import annotations

import re

from trustlab.data import load_dataset


def test_every_region_and_education_code_of_chile_is_explained():
    dataset = load_dataset("chile")
    for column in ("region", "education", "vote"):
        for code in dataset.frame[column].dropna().unique():
            # the code followed by its meaning in words: "SA city of Santiago", "P primary"
            assert re.search(rf"\b{code} [a-z]", dataset.description, re.IGNORECASE), (
                column,
                code,
            )
