"""Review 59 (polysae): `sae train` on texts that leave fewer than two token rows.

Each text's first token is left out, so a file with the one line "hello world" (two tokens)
gives one row, and the fit refused it as "X: expected at least 2 rows, got 1": X is no option
of the command. The refusal now names --texts.
"""

from __future__ import annotations

from cli_helpers import one_line, run_main


def test_texts_of_one_token_row_name_texts(tmp_path, capsys, tiny_llama_folder):
    texts = tmp_path / "one.txt"
    texts.write_text("hello world\n", encoding="utf-8")
    args = ["interpret", "sae", "train", "--model", tiny_llama_folder, "--layer", 1,
            "--out", tmp_path / "sae", "--texts", texts]  # fmt: skip
    code, _, err = run_main(args, capsys)
    line = one_line(err)
    assert code == 2 and line.startswith(
        "trustlab: error: --texts: expected texts of at least 2"
    ), err
    assert "got '1 token row'" in line
    assert not (tmp_path / "sae").exists()
