"""'trustlab watermark describe IMAGE --prompt-template T' or '--max-new-tokens N' without --vlm
printed the template backend's paragraph and exited 0 (review 64): both options only shape a
vision-language model's answer, and --wmarkgpt-code without --vlm was already refused. Now one
line, exit 2, before the image is read."""

import pytest

from cli_helpers import one_line, run_main


@pytest.mark.parametrize(
    ("option", "value"), [("--prompt-template", "{image} {question}"), ("--max-new-tokens", "5")]
)
def test_vlm_only_options_without_vlm_are_refused(tmp_path, capsys, option, value):
    image = tmp_path / "missing.png"  # refused before it is read
    code, _, err = run_main(["watermark", "describe", str(image), option, value], capsys)
    assert code == 2
    assert one_line(err).startswith(
        f"trustlab: error: {option}: expected --vlm (it sets the model's prompt or answer), got"
    )
