"""load_base_model on a folder whose weights file is empty (a copy cut short, a disk that filled):
torch.load raises EOFError with no text, which was not among the refused errors, so the library
raised a bare EOFError and the CLI said 'failed' (exit 1) without naming the file (review 54s)."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.robustness.digits import digits_model, load_base_model, save_base_model


def test_an_empty_weights_file_is_an_input_error_naming_it(tmp_path):
    save_base_model(digits_model(), tmp_path)
    (weights,) = tmp_path.glob("*.pt")
    weights.write_bytes(b"")
    with pytest.raises(InputError, match=r"^model: .*empty or cut short") as info:
        load_base_model(tmp_path)
    assert weights.name in str(info.value)
