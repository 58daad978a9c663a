"""The trustlab provider names a bad GenerateConfig value as set (review 2 of the inspect
provider): ``max_tokens=0`` failed the sample with 'max_new_tokens: ...', a negative seed with
'random_state: ...' and an empty stop string with 'stop: ...', names the user never typed."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.model import GenerateConfig  # noqa: E402

from trustlab.errors import InputError  # noqa: E402
from trustlab.evals.provider import _settings  # noqa: E402


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ({"max_tokens": 0}, "config.max_tokens: expected an integer >= 1, got 0"),
        ({"max_tokens": -2}, "config.max_tokens: expected an integer >= 1"),
        ({"seed": -1}, "config.seed: expected None, an integer >= 0"),
        ({"stop_seqs": ["", "x"]}, "config.stop_seqs: expected non-empty stop strings"),
        ({"temperature": 2.5}, "config.temperature: expected a number in [0, 2]"),
        ({"top_logprobs": 21}, "config.top_logprobs: expected an integer in [0, 20]"),
    ],
)
def test_a_bad_setting_is_named_as_set(setting, named):
    with pytest.raises(InputError) as info:
        _settings(GenerateConfig(**setting))
    assert str(info.value).startswith(named), info.value


def test_good_settings_reach_completions_unchanged():
    config = GenerateConfig(max_tokens=7, temperature=0, seed=3, stop_seqs=["\n"], top_logprobs=2)
    assert _settings(config) == {
        "max_new_tokens": 7, "temperature": 0.0, "top_p": 1.0, "random_state": 3,
        "stop": ["\n"], "top_logprobs": 2,
    }  # fmt: skip
    defaults = _settings(GenerateConfig())
    assert (defaults["max_new_tokens"], defaults["temperature"]) == (256, 1.0)
    assert defaults["top_logprobs"] is None and defaults["random_state"] is None


@pytest.mark.parametrize(
    ("argument", "named"),
    [
        ("max_batch_size=0", "-M max_batch_size: expected an integer >= 1, got 0"),
        ("batch_window=abc", "-M batch_window: expected a number"),
        ("device=tpu", "-M device: expected"),
    ],
)
def test_a_bad_model_argument_is_named_as_typed(argument, named, tmp_path, capsys):
    """'eval run -M max_batch_size=0' said 'max_batch_size: ...' (the -T ones say '-T key')."""
    from trustlab.cli.main import main

    logs = tmp_path / "logs"
    weights = tmp_path / "model.gguf"  # a name the provider accepts; nothing is loaded
    weights.write_bytes(b"")
    model = f"trustlab/{weights}"
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "run", "demo", "--model", model, "-M", argument, "--out", str(logs)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"trustlab: error: {named}"), err
    assert not logs.exists()


def test_a_gpu_torch_does_not_see_is_refused_before_any_log(monkeypatch, tmp_path, capsys):
    """'-M device=cuda' without a GPU was found at the first generate: exit 1 'the eval failed'
    and an errored log left in --out for the next run to consider."""
    import torch

    from trustlab.cli.main import main
    from trustlab.errors import ConfigError
    from trustlab.evals.provider import TrustlabModelAPI

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match="device: 'cuda:1' was asked for"):
        TrustlabModelAPI("any", device="cuda:1")
    weights = tmp_path / "model.gguf"  # a name the provider accepts; nothing is loaded
    weights.write_bytes(b"")
    logs = tmp_path / "logs"
    argv = ["eval", "run", "demo", "--model", f"trustlab/{weights}", "-M", "device=cuda"]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", str(logs)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert "torch sees no GPU" in err and not logs.exists()


def test_an_unknown_model_is_refused_when_inspect_builds_the_provider(tmp_path):
    """'inspect eval ... --model trustlab/nosuch' found the name at the first generate: an
    errored log ('Task interrupted') for every such run; now inspect's eval stops before any log."""
    from inspect_ai import eval as inspect_eval

    from trustlab.evals.demo import demo
    from trustlab.evals.provider import TrustlabModelAPI

    with pytest.raises(InputError, match="model: expected trustlab/<model> with the model"):
        TrustlabModelAPI("nosuch")
    logs = tmp_path / "logs"
    with pytest.raises(InputError, match="got 'nosuch'"):
        inspect_eval(demo(), model="trustlab/nosuch", limit=1, log_dir=str(logs), display="none")
    assert not list(logs.glob("*.eval"))
