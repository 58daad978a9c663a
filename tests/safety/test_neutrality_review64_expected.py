"""A saved prompt file whose row's expected label is not among its accepted labels (an edited
``expected`` column) was read as it came: the match rate is scored on ``accepted``, so the edit
did nothing, silently."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.safety.neutrality import load_prompts, own_prompts


def test_an_expected_label_outside_the_accepted_labels_is_refused(tmp_path):
    path = tmp_path / "prompts.csv"
    own_prompts().subset(per_task=1, random_state=0).save(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert ",voting_questions,no_approximation,no_approximation," in lines[1]
    lines[1] = lines[1].replace(",no_approximation,no_approximation,", ",refusal,no_approximation,")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"row 0: expected a label of its accepted column among "
                       r"no_approximation, got 'refusal'"):  # fmt: skip
        load_prompts(path)
