"""The trustlab provider of inspect on SmolLM2: batching, chat template, logprobs, settings,
token counting, the openai-api path against ``trustlab llm serve``, and no network."""

from __future__ import annotations

import asyncio
import math
import os
import socket
import subprocess
import sys

import pytest

inspect_ai = pytest.importorskip("inspect_ai")
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig  # noqa: E402

from trustlab.evals.demo import CAPITALS, demo  # noqa: E402
from trustlab.llm import make_server  # noqa: E402


def run(task, model, **kwargs):
    logs = inspect_ai.eval(
        task, model=model, display="none", log_dir=kwargs.pop("log_dir"), **kwargs
    )
    assert len(logs) == 1
    return logs[0]


def texts(log):
    return {s.id: s.output.completion for s in log.samples}


@pytest.fixture
def no_network(monkeypatch):
    """Every connection to anything but loopback raises (and is recorded)."""
    attempts = []
    connect, create = socket.socket.connect, socket.create_connection

    def loopback(address):
        host = address[0] if isinstance(address, tuple) else address
        return isinstance(host, str) and (host in ("localhost", "::1") or host.startswith("127."))

    def guarded_connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not loopback(address):
            attempts.append(address)
            raise OSError(f"network blocked in this test: {address}")
        return connect(self, address)

    def guarded_create(address, *args, **kwargs):
        if not loopback(address):
            attempts.append(address)
            raise OSError(f"network blocked in this test: {address}")
        return create(address, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "create_connection", guarded_create)
    return attempts


def test_the_socket_guard_blocks_the_outside(no_network):
    # the guard of the offline test below must really refuse a non-loopback address
    with pytest.raises(OSError, match="network blocked"):
        socket.create_connection(("192.0.2.1", 80), timeout=0.1)
    assert no_network == [("192.0.2.1", 80)]


def test_twenty_samples_run_offline_batched_and_equal_one_at_a_time(
    provider_model, smollm2, no_network, monkeypatch, tmp_path
):
    sizes = []
    completions = type(smollm2).completions

    def counting(self, prompts, *args, **kwargs):
        sizes.append(len(prompts))
        return completions(self, prompts, *args, **kwargs)

    monkeypatch.setattr(type(smollm2), "completions", counting)
    log = run(demo(max_tokens=6), provider_model, log_dir=str(tmp_path))
    assert log.status == "success", log.error
    assert len(log.samples) == 20 == len(CAPITALS)
    assert no_network == []
    assert max(sizes) > 1 and sum(sizes) == 20  # concurrent samples shared forward passes
    alone = [s.input for s in log.samples]
    expected = [smollm2.generate([q], 6)[0] for q in alone]  # one at a time, transformers' loop
    assert [s.output.completion for s in log.samples] == expected


def test_logprobs_equal_the_models_log_softmax(provider_model, smollm2, tmp_path):
    import torch

    log = run(demo(max_tokens=1), provider_model, log_dir=str(tmp_path), limit=2, top_logprobs=4)
    for sample in log.samples:
        ids = smollm2.tokenizer.apply_chat_template(
            [{"role": "user", "content": sample.input}], add_generation_prompt=True
        )
        ids = ids["input_ids"] if hasattr(ids, "keys") else ids
        with torch.inference_mode():
            logits = smollm2.model(torch.tensor([ids])).logits[0, -1].double()
        logp = torch.log_softmax(logits, dim=-1)
        values, best = torch.topk(logp, 4)
        first = sample.output.choices[0].logprobs.content[0]
        assert first.token == smollm2.tokenizer.decode([int(best[0])])
        # float32 forward passes: a batch (padding, shared prefix) moves the last digits
        assert math.isclose(first.logprob, float(values[0]), abs_tol=1e-4)
        got = [t.logprob for t in first.top_logprobs]
        assert got == pytest.approx(values.tolist(), abs=1e-4)


def test_system_and_user_messages_go_through_the_chat_template(provider_model, smollm2):
    model = inspect_ai.model.get_model(provider_model, memoize=False)
    messages = [
        ChatMessageSystem(content="Answer in French."),
        ChatMessageUser(content="Name a colour."),
    ]
    output = asyncio.run(
        model.generate(messages, config=GenerateConfig(temperature=0, max_tokens=5))
    )
    conversation = [
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Name a colour."},
    ]
    assert output.completion == smollm2.completions([conversation], 5)[0].text
    assert output.completion != smollm2.completions("Name a colour.", 5)[0].text


@pytest.mark.parametrize(
    "setting", [{"frequency_penalty": 0.5}, {"top_k": 5}, {"num_choices": 2}, {"top_p": 1.5}]
)
def test_unsupported_settings_are_refused_not_ignored(provider_model, setting, tmp_path):
    log = run(demo(), provider_model, log_dir=str(tmp_path), limit=1, **setting)
    assert log.status == "error"
    assert f"config.{next(iter(setting))}" in log.error.message


def test_top_p_is_used_a_tiny_nucleus_samples_the_greedy_text(provider_model, tmp_path):
    def answers(**config):
        return texts(
            run(demo(max_tokens=8), provider_model, log_dir=str(tmp_path), limit=4, **config)
        )

    greedy = answers(temperature=0.0)
    assert answers(temperature=1.0, top_p=1e-6, seed=3) == greedy  # only the best token is left
    assert answers(temperature=1.0, top_p=1.0, seed=3) != greedy  # the same seed without it


def test_tokens_are_counted_with_the_models_tokenizer(provider_model, smollm2, monkeypatch):
    import inspect_ai.model._model as model_module

    def no_tiktoken(text):
        raise AssertionError("inspect's tiktoken counter was called")

    monkeypatch.setattr(model_module, "count_text_tokens", no_tiktoken)
    model = inspect_ai.model.get_model(provider_model, memoize=False)
    text = "Context compaction counts tokens like these."
    want = len(smollm2.tokenizer(text, add_special_tokens=False)["input_ids"])
    assert asyncio.run(model.api.count_text_tokens(text)) == want
    assert asyncio.run(model.count_tokens([ChatMessageUser(content=text)])) >= want


def test_openai_api_against_llm_serve_gives_identical_outputs_and_logprobs(
    provider_model, smollm2, tmp_path
):
    with make_server(smollm2) as server:
        remote = run(
            demo(max_tokens=5),
            "openai-api/trustlab/smollm2-135m-instruct",
            log_dir=str(tmp_path),
            limit=6,
            logprobs=True,
            top_logprobs=2,
            model_base_url=server.url + "/v1",
            model_args={"api_key": "unused"},
        )
    local = run(
        demo(max_tokens=5),
        provider_model,
        log_dir=str(tmp_path),
        limit=6,
        logprobs=True,
        top_logprobs=2,
    )
    assert remote.status == local.status == "success", (remote.error, local.error)
    assert texts(remote) == texts(local)
    for a, b in zip(remote.samples, local.samples, strict=True):
        first_a = a.output.choices[0].logprobs.content[0]
        first_b = b.output.choices[0].logprobs.content[0]
        assert first_a.token == first_b.token
        assert first_a.logprob == pytest.approx(first_b.logprob, abs=1e-4)
        assert len(first_a.top_logprobs) == len(first_b.top_logprobs) == 2


TASK_FILE = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def tiny():
    return Task(dataset=[Sample(input="Say hi.", target="hi"), Sample(input="Say yes.", target="yes"),
                         Sample(input="Say no.", target="no")],
                solver=generate(), scorer=includes(), config=GenerateConfig(temperature=0, max_tokens=3))
"""


def test_inspect_command_line_finds_the_provider_through_the_entry_point(tmp_path):
    from inspect_ai.log import read_eval_log

    (tmp_path / "tiny.py").write_text(TASK_FILE)
    inspect_cli = [sys.executable, "-c", "from inspect_ai._cli.main import main; main()"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "NO_PROXY": "*"}
    done = subprocess.run(
        [*inspect_cli, "eval", "tiny.py", "--model", "trustlab/smollm2-135m-instruct",
         "--limit", "2", "--log-dir", "logs", "--display", "none"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success" and len(log.samples) == 2
    assert log.eval.model == "trustlab/smollm2-135m-instruct"


def test_the_device_model_argument(monkeypatch, tmp_path):
    """``-M device=`` is checked when inspect builds the provider; a model already served on
    another device is refused rather than silently used where it is."""
    import torch

    from tiny_llama import tiny_llama, word_tokenizer
    from trustlab.errors import InputError
    from trustlab.evals import provider as provider_module
    from trustlab.evals import use_local_model

    with pytest.raises(InputError, match="device: expected"):
        provider_module.TrustlabModelAPI("any", device="gpu")
    with pytest.raises(InputError, match="batch_window and device"):
        provider_module.TrustlabModelAPI("any", devices="cpu")
    name = use_local_model(tiny_llama(word_tokenizer(["a", "b"]), 5), "tiny-on-cpu")
    api = provider_module.TrustlabModelAPI(name, device="cpu")
    assert api.local_model.model.device.type == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(InputError, match="already loaded on cpu, not 'cuda'"):
        _ = provider_module.TrustlabModelAPI(name, device="cuda").local_model
