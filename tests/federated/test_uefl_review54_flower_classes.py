"""Review 54: ``flower-app --n-classes 10000000000`` was only checked to be an integer >= 2: the
app was written, and every node then failed sizing a model with 1e10 outputs. The bound is
check_silos's for own labels, 10,000 classes."""

import pytest

from cli_helpers import one_line, run_main, with_options
from trustlab.errors import InputError
from trustlab.federated import write_flower_app


@pytest.mark.parametrize("n_classes", [10_001, 10_000_000_000])
def test_more_than_ten_thousand_classes_are_refused_naming_the_option(tmp_path, capsys,
                                                                       n_classes):  # fmt: skip
    with pytest.raises(InputError, match=r"^n_classes: expected an integer in \[2, 10,000\]"):
        write_flower_app(tmp_path / "lib", n_classes=n_classes)
    assert not (tmp_path / "lib" / "pyproject.toml").exists()
    args = ["federated", "flower-app", "--out", tmp_path / "app"]
    code, _, err = run_main(with_options(args, ["--n-classes", n_classes]), capsys)
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --n-classes: expected an integer in [2, 10,000]")
    assert str(n_classes) in line
    assert not (tmp_path / "app" / "pyproject.toml").exists()


def test_ten_thousand_classes_are_written(tmp_path):
    app = write_flower_app(tmp_path / "app", n_classes=10_000)
    assert "num-classes = 10000" in app.pyproject.read_text()
