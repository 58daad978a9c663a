"""The amounts the plans of run-like commands announce (cli/_runs.amount, counted)."""

import pytest

from trustlab.cli._runs import amount, counted


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (9_999_999, "9,999,999"),
        (10**7, "10^7"),
        (2.5e9, "2.5 x 10^9"),
        (10**12, "10^12"),
        # written with 3 significant digits, these were '10 x 10^7' and '1 x 10^7'
        (99_999_999, "10^8"),
        (1.004e7, "10^7"),
        (1.06e7, "1.06 x 10^7"),
    ],
)
def test_amount_writes_a_count_as_people_read_it(value, text):
    assert amount(value) == text


def test_counted_adds_the_plural():
    assert counted(1, "point") == "1 point" and counted(99_999_999, "point") == "10^8 points"


def test_text_lines_drop_a_byte_order_mark(tmp_path):
    # --texts / --harmful / --harmless files saved by Excel or Notepad start with U+FEFF, which
    # stayed glued to the first line (str.strip does not remove it)
    from trustlab.cli._common import text_lines

    path = tmp_path / "texts.txt"
    path.write_bytes("\ufefffirst line\nsecond\n".encode())
    assert text_lines(path, "--texts") == ["first line", "second"]
