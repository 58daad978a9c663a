"""``trustlab strategic simulate`` with a bundled table: the synthetic population's options are
refused rather than silently unused (review 4)."""

import pytest
from typer.testing import CliRunner

from trustlab.cli import strategic
from trustlab.errors import InputError


@pytest.mark.parametrize(
    "data, option, value", [("chile", "--n-samples", "500"), ("logan", "--budget-ratio", "2")]
)
def test_simulate_refuses_synthetic_options_with_a_table(tmp_path, data, option, value):
    args = ["simulate", "--out", str(tmp_path / "sim"), "--data", data, option, value]
    result = CliRunner().invoke(strategic.app, args)
    assert isinstance(result.exception, InputError), result.output
    assert result.exception.argument == option
    assert f"--data {data}" in str(result.exception)
    assert not (tmp_path / "sim").exists()  # refused before any work
