"""--correct-first 0 checked no state and printed 'unsafe nan' (share of 0 checked steps); it is
refused. The CLI checks the fit settings through the public SafetyPolytope.check_params."""

import pytest

import trustlab.llm
from cli_helpers import one_line, run_main
from trustlab.errors import InputError
from trustlab.safety import SafetyPolytope
from trustlab.safety.polytope import check_correction


@pytest.fixture(autouse=True)
def no_model(monkeypatch):
    def refuse(name):
        raise AssertionError(f"the model {name} was loaded before the settings were checked")

    monkeypatch.setattr(trustlab.llm, "load_model", refuse)


def test_check_correction_refuses_zero_steps():
    with pytest.raises(InputError, match="correct_first: expected an integer >= 1"):
        check_correction("project", 0)
    assert check_correction("project", 1) == ("project", 1)


@pytest.mark.parametrize("command", ["eval", "generate"])
def test_cli_refuses_correct_first_zero_before_the_model_loads(tmp_path, capsys, command):
    line = ["safety", "polytope", command, "--polytope", str(tmp_path), "--correct-first", "0"]
    code, _, err = run_main(line + (["hi"] if command == "generate" else []), capsys)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --correct-first: expected an integer >= 1")


def test_check_params_is_public_and_names_the_setting():
    assert SafetyPolytope(n_facets=2).check_params().n_facets == 2
    with pytest.raises(InputError, match="n_facets"):
        SafetyPolytope(n_facets=0).check_params()


def test_cli_fit_uses_the_public_check(tmp_path, capsys, monkeypatch):
    seen = []
    monkeypatch.setattr(SafetyPolytope, "check_params", lambda self: seen.append(self) or self)
    monkeypatch.setattr(SafetyPolytope, "_check_params", lambda self: pytest.fail("private"))
    fit = ["safety", "polytope", "fit", "--layer", "3", "--out", str(tmp_path / "sap")]
    code, _, _ = run_main(fit, capsys)  # the stubbed check passes; the model load is refused
    assert seen and code != 0
