"""``trustlab eval run``: a -T or -M key given twice is refused before anything runs (the last
value was used silently: -T ablate=sender -T ablate=recipient ran the recipient ablation only);
a bad --out is named as --out."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from cli_helpers import one_line  # noqa: E402

WEAK = "trustlab-stub/weak"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-T", "ablate=sender", "-T", "ablate=recipient"], "-T ablate: expected each key once"),
        (["-T", "mode=binary", "-T", "mode=binary"], "-T mode: expected each key once"),
        (["-M", "seed=1", "-M", "seed=2"], "-M seed: expected each key once"),
    ],
)
def test_a_key_given_twice_is_refused_in_one_line(run, tmp_path, argv, message):
    out = tmp_path / "logs"
    code, stdout, err = run("eval", "run", "casebench", "--model", WEAK, *argv, "--out", out)
    assert code == 2 and stdout == ""
    assert one_line(err).startswith(f"trustlab: error: {message}, got it more than once"), err
    assert not out.exists()  # refused before anything ran


def test_an_out_that_is_a_file_is_named_as_out(run, tmp_path):
    out = tmp_path / "logs"
    out.write_text("")
    code, _, err = run("eval", "run", "demo", "--model", WEAK, "--limit", "1", "--out", out)
    # it was named 'log_dir' (run_eval's argument), an option eval run does not have
    assert code == 2 and one_line(err).startswith("trustlab: error: --out: expected a directory")
