"""RemoteModel against a real HTTP server on 127.0.0.1 (make_server), faults injected there."""

import signal
import socket
import time

import numpy as np
import pytest

import trustlab.llm.remote as remote
from trustlab.errors import BackendError, InputError
from trustlab.llm import RemoteModel, make_server
from trustlab.llm.server import Faults


class Reverser:
    """A deterministic stand-in for LocalModel: each prompt reversed, tagged with the mode."""

    name = "reverser"

    def __init__(self, pause=0.0):
        self.pause = pause  # seconds per call, so that concurrent requests overlap

    def generate(
        self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, random_state=None
    ):
        if self.pause:
            time.sleep(self.pause)
        tag = f"{'chat' if chat else 'text'}/{max_new_tokens}/{temperature:g}/{random_state}"
        return [f"{tag} {p[::-1]}" for p in prompts]


PROMPTS = ["The first prompt.", "Second", "", "a b c", "Ünïcode ✓", "six", "seven!"]


@pytest.fixture
def waits(monkeypatch):
    """The waits RemoteModel asks for between attempts (recorded, not slept)."""
    recorded = []
    monkeypatch.setattr(remote, "_sleep", recorded.append)
    return recorded


def serving(faults=None, pause=0.0):
    return make_server(Reverser(pause), faults=faults)


def client(server, **kwargs):
    return RemoteModel(server.url, "reverser", **kwargs)


def test_chat_and_completion_round_trip():
    with serving() as srv, client(srv) as model:
        assert (
            model.chat("hello", max_tokens=5, temperature=0.5, random_state=2)
            == "chat/5/0.5/2 olleh"
        )
        assert model.complete("abc", max_tokens=3) == "text/3/0/None cba"
        messages = [{"role": "user", "content": "xy"}]
        assert model.chat(messages) == "chat/256/0/None yx"
        parts = [
            {
                "role": "user",
                "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}],
            }
        ]
        assert model.chat(parts) == "chat/256/0/None yx"
        assert model.models() == ["reverser"]


@pytest.mark.parametrize("chat", [True, False])
def test_generate_equals_the_backend_in_input_order(chat):
    expected = Reverser().generate(PROMPTS, 9, chat=chat, temperature=0.0, random_state=1)
    with serving() as srv, client(srv, max_concurrency=3) as model:
        assert model.generate(PROMPTS, 9, chat=chat, random_state=1) == expected
        assert model.generate("one", 9, chat=chat, random_state=1) == [
            expected[0].replace(PROMPTS[0][::-1], "eno")
        ]


def test_a_generator_gives_every_prompt_of_a_call_one_seed():
    with serving() as srv, client(srv) as model:
        texts = model.generate(PROMPTS[:4], 9, random_state=np.random.default_rng(0))
    seeds = {text.split(" ", 1)[0].rsplit("/", 1)[1] for text in texts}
    assert len(seeds) == 1 and seeds.pop().isdigit()


def test_retries_through_injected_503s(waits):
    with serving(Faults(count=3, status=503)) as srv, client(srv, max_retries=3) as model:
        assert model.chat("ab") == "chat/256/0/None ba"
        assert srv.n_requests == 4
    assert len(waits) == 3


def test_backoff_doubles_with_bounded_jitter(waits):
    with serving(Faults(count=4, status=502)) as srv, client(srv, backoff=0.1) as model:
        model.complete("x")
    assert len(waits) == 4
    for attempt, wait in enumerate(waits):
        assert 0.1 * 2**attempt <= wait <= 0.125 * 2**attempt


def test_429_waits_as_long_as_retry_after_asks(waits):
    faults = Faults(count=2, status=429, retry_after=2)
    with serving(faults) as srv, client(srv, backoff=0.001) as model:
        assert model.complete("ab") == "text/256/0/None ba"
        assert srv.n_requests == 3
    assert waits == [2.0, 2.0]


def test_gives_up_after_max_retries_naming_url_status_and_body(waits):
    with serving(Faults(count=10, status=503)) as srv, client(srv, max_retries=2) as model:
        with pytest.raises(BackendError) as exc:
            model.chat("x")
        assert srv.n_requests == 3
    message = str(exc.value)
    assert f"{srv.url}/v1/chat/completions" in message
    assert "3 attempt(s)" in message and "HTTP 503" in message and "injected fault" in message


def test_other_4xx_is_not_retried(waits):
    with serving() as srv, RemoteModel(srv.url, "gpt-9", max_retries=3) as model:
        with pytest.raises(BackendError, match="HTTP 404.*'gpt-9' not found.*not retried"):
            model.chat("x")
        assert srv.n_requests == 1
    assert waits == []


@pytest.mark.timeout(20)
def test_slow_server_times_out_with_a_backend_error():
    faults = Faults(count=1, status=None, delay=60.0)
    with serving(faults) as srv, client(srv, timeout=0.3, max_retries=0) as model:
        with pytest.raises(BackendError, match=r"1 attempt\(s\).*within the 0.3 s timeout"):
            model.chat("x")


@pytest.mark.timeout(20)
def test_timed_out_attempt_is_retried(waits):
    faults = Faults(count=1, status=None, delay=60.0)
    with serving(faults) as srv, client(srv, timeout=0.3, max_retries=1) as model:
        assert model.complete("ab") == "text/256/0/None ba"
        assert srv.n_requests == 2


@pytest.mark.parametrize(
    "body, call, reason",
    [
        ("<html>bad gateway</html>", "chat", "not JSON.*bad gateway"),
        ('{"object": "chat.completion"}', "chat", r"no choices\[0\].message.content"),
        ('{"choices": [{"text": 3}]}', "complete", r"no choices\[0\].text"),
        ('{"choices": []}', "complete", r"no choices\[0\].text"),
    ],
)
def test_malformed_responses_are_reported_not_retried(waits, body, call, reason):
    with serving(Faults(malformed=body)) as srv, client(srv) as model:
        with pytest.raises(BackendError, match="malformed response.*" + reason):
            getattr(model, call)("x")
        assert srv.n_requests == 1


def test_unreachable_port_fails_quickly(waits):
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = RemoteModel(f"http://127.0.0.1:{port}", "m", max_retries=2)
    with pytest.raises(BackendError, match=r"3 attempt\(s\).*connection failed"):
        model.complete("x")
    assert len(waits) == 2


@pytest.mark.parametrize("limit", [1, 3])
def test_concurrency_limit_is_respected(limit):
    with serving(pause=0.05) as srv, client(srv, max_concurrency=limit) as model:
        prompts = [f"prompt {i}" for i in range(3 * limit + 2)]
        assert model.generate(prompts, chat=False) == Reverser().generate(prompts, chat=False)
        assert srv.max_in_flight == limit


def test_a_failed_prompt_fails_generate(waits):
    with serving(Faults(count=100, status=500)) as srv, client(srv, max_retries=0) as model:
        with pytest.raises(BackendError, match="HTTP 500"):
            model.generate(PROMPTS)


@pytest.mark.parametrize(
    "base_url, expected",
    [
        ("http://localhost:8000", "http://localhost:8000/v1"),
        ("http://localhost:8000/", "http://localhost:8000/v1"),
        ("https://api.example.com/v1/", "https://api.example.com/v1"),
        ("http://10.0.0.2:11434/api/openai/v1", "http://10.0.0.2:11434/api/openai/v1"),
    ],
)
def test_base_url_is_normalised(base_url, expected):
    assert RemoteModel(base_url, "m").base_url == expected


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"base_url": "localhost:8000"}, "base_url"),
        ({"base_url": "ftp://host/v1"}, "base_url"),
        ({"base_url": "http://"}, "base_url"),
        ({"base_url": "http://host:99999"}, "base_url"),
        ({"base_url": 8000}, "base_url"),
        ({"model": ""}, "model"),
        ({"api_key": ""}, "api_key"),
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"timeout": -1.0}, "timeout"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
        ({"backoff": -0.5}, "backoff"),
    ],
)
def test_bad_constructor_arguments(kwargs, argument):
    kwargs = {"base_url": "http://127.0.0.1:1", "model": "m", **kwargs}
    with pytest.raises(InputError, match=f"^{argument}: expected"):
        RemoteModel(**kwargs)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda m: m.chat("x", max_tokens=0), "max_tokens"),
        (lambda m: m.chat("x", temperature=3), "temperature"),
        (lambda m: m.chat("x", random_state=-1), "random_state"),
        (lambda m: m.generate(["x"], temperature=2.5), "temperature"),
        (lambda m: m.generate(["x"], chat=1), "chat"),
        (lambda m: m.chat("x", stop=[""]), "stop"),
        (lambda m: m.chat([{"role": "user"}]), "messages"),
        (lambda m: m.chat([]), "messages"),
        (lambda m: m.complete(["x"]), "prompt"),
        (lambda m: m.generate([1, 2]), "prompts"),
        (lambda m: m.generate([]), "prompts"),
        (lambda m: m.generate(["x"], 0), "max_new_tokens"),
    ],
)
def test_bad_call_arguments_fail_before_any_request(call, argument):
    with serving() as srv, client(srv) as model:
        with pytest.raises(InputError, match=f"^{argument}: expected"):
            call(model)
        assert srv.n_requests == 0


def test_api_key_is_sent_as_a_bearer_token(waits):
    with make_server(Reverser(), api_key="sk-test") as srv:
        with RemoteModel(srv.url, "reverser", "sk-test") as model:
            assert model.complete("ab") == "text/256/0/None ba"
            assert model.models() == ["reverser"]
        with RemoteModel(srv.url, "reverser", "sk-wrong", max_retries=3) as model:
            with pytest.raises(BackendError, match="HTTP 401.*API key.*not retried"):
                model.complete("ab")
        assert srv.n_requests == 3


def test_stream_yields_the_answer_in_pieces():
    with serving() as srv, client(srv) as model:
        assert "".join(model.stream("hello", 5)) == "chat/5/0/None olleh"
        assert list(model.stream("abc", 3, chat=False, stop=["z"])) == ["text/3/0/None cba"]


def test_a_call_inside_a_stream_loop_holding_every_slot_is_refused_not_a_hang():
    # max_concurrency=1: the stream holds the only slot, and chat() inside its loop waited forever
    with serving() as srv, client(srv, max_concurrency=1, timeout=5) as model:
        pieces = model.stream("hello", 5)
        assert next(pieces) == "chat/5/0/None olleh"

        def hung(signum, frame):  # a regression waits forever: end it here, not the run
            raise TimeoutError("the nested call waits for the slot its own stream holds")

        previous = signal.signal(signal.SIGALRM, hung)
        signal.alarm(20)
        try:
            with pytest.raises(
                InputError, match=r"^max_concurrency: expected more than the 1 stream"
            ):
                model.chat("inner", 3)
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        assert list(pieces) == []  # the stream ends as before; its slot is free again
        assert model.chat("ab", 3) == "chat/3/0/None ba"
    with serving() as srv, client(srv, max_concurrency=2, timeout=5) as model:
        for piece in model.stream("hello", 5):  # a free slot: the nested call runs
            assert model.chat("ab", 3) == "chat/3/0/None ba" and piece


def test_stream_is_retried_before_the_first_piece(waits):
    with serving(Faults(count=2, status=503)) as srv, client(srv, max_retries=2) as model:
        assert list(model.stream("ab")) == ["chat/256/0/None ba"]
        assert srv.n_requests == 3
    assert len(waits) == 2


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('data: {"choices": [{"index": 0, "text": "x"}]}\n\n', "ended without \\[DONE\\]"),
        ('data: {"error": {"message": "boom"}}\n\n', "stream failed.*boom"),
        ("data: <html>\n\n", "not JSON"),
        ('data: {"choices": 3}\n\n', "malformed stream chunk"),
    ],
)
def test_a_broken_stream_is_a_backend_error(body, reason):
    with serving(Faults(malformed=body)) as srv, client(srv) as model:
        with pytest.raises(BackendError, match=reason):
            list(model.stream("x", chat=False))
        assert model.max_retries > 0 and srv.n_requests == 1  # answered, then broken: no retry


def test_completions_from_a_server_without_logprobs_is_a_backend_error(waits):
    with serving() as srv, client(srv) as model:
        with pytest.raises(BackendError, match="HTTP 400.*logprobs: not supported.*not retried"):
            model.completions(["a", "b"])


@pytest.mark.parametrize(
    ("body", "chat"),
    [
        (
            '{"choices": [{"text": "ab", "finish_reason": "length", "logprobs": {"tokens": ["a", '
            '"b"], "token_logprobs": [-1.0, -0.5], "top_logprobs": null}}]}',
            False,
        ),
        (
            '{"choices": [{"message": {"content": "ab"}, "finish_reason": "length", "logprobs": '
            '{"content": [{"token": "a", "logprob": -1.0}, {"token": "b", "logprob": -0.5, '
            '"top_logprobs": null}]}}]}',
            True,
        ),
    ],
)
def test_completions_without_alternatives_from_the_server_have_none(waits, body, chat):
    # what a server may send when no alternatives were asked for (top_logprobs=0); it was a
    # BackendError "malformed logprobs"
    with serving(Faults(malformed=body)) as srv, client(srv) as model:
        (answer,) = model.completions("x", 2, chat=chat)
    assert answer.text == "ab" and answer.tokens == ("a", "b")
    assert answer.logprobs == (-1.0, -0.5) and answer.top_logprobs == ((), ())


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda m: m.completions(["x"], top_logprobs=21), "top_logprobs"),
        (lambda m: m.completions(["x"], stop=[""]), "stop"),
        (lambda m: m.stream(["x"], chat=False), "messages"),
        (lambda m: m.stream("x", max_tokens=0), "max_tokens"),
    ],
)
def test_bad_stream_and_completions_arguments_fail_before_any_request(call, argument):
    with serving() as srv, client(srv) as model:
        with pytest.raises(InputError, match=f"^{argument}: expected"):
            call(model)
        assert srv.n_requests == 0


def test_remote_completions_and_stream_equal_local_smollm2(smollm2):
    prompts = ["Name a colour.", "What is the capital of France?"]
    local = smollm2.completions(prompts, 5, top_logprobs=2)
    with make_server(smollm2) as srv, RemoteModel(srv.url, smollm2.name) as model:
        remote = model.completions(prompts, 5, top_logprobs=2)
        plain = model.completions("The capital of France is", 3, chat=False, top_logprobs=1)
        streamed = "".join(model.stream(prompts[1], 5))
    assert [r.text for r in remote] == [c.text for c in local] and streamed == local[1].text
    for r, c in zip(remote, local, strict=True):
        assert r.tokens == c.tokens and r.finish_reason == c.finish_reason
        np.testing.assert_allclose(r.logprobs, c.logprobs, atol=1e-4)
        assert [[t for t, _ in top] for top in r.top_logprobs] == [
            [t for t, _ in top] for top in c.top_logprobs
        ]
    assert plain[0].text == smollm2.completions("The capital of France is", 3, chat=False)[0].text


def test_remote_generate_equals_local_smollm2(smollm2):
    prompts = ["Name a colour.", "What is the capital of France?"]
    with make_server(smollm2) as srv, RemoteModel(srv.url, smollm2.name) as model:
        assert model.generate(prompts, 8) == smollm2.generate(prompts, 8)
