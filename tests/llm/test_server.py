"""make_server: the OpenAI schema, request checking, faults and life cycle, over real HTTP."""

import json
import queue
import socket
import threading

import httpx
import openai
import pytest

from trustlab.errors import InputError
from trustlab.llm import make_server

# from the module: once trustlab.llm.server is imported, the package attribute `serve` is the module
from trustlab.llm.server import Faults, serve


class Reverser:
    """A deterministic stand-in for LocalModel: each prompt reversed, tagged with the mode."""

    name = "reverser"

    def __init__(self, tokenizer=None):
        self.calls = []
        if tokenizer is not None:
            self.tokenizer = tokenizer

    def generate(
        self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, random_state=None
    ):
        self.calls.append(
            {
                "prompts": list(prompts),
                "max_new_tokens": max_new_tokens,
                "chat": chat,
                "temperature": temperature,
                "random_state": random_state,
            }  # fmt: skip
        )
        if any(p == "explode" for p in prompts):
            raise RuntimeError("the model broke")
        return [("chat " if chat else "text ") + p[::-1] for p in prompts]


class WordTokenizer:
    """Splits on spaces (a tokenizer with no chat template), to check the usage counts."""

    chat_template = None

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": list(range(len(text.split())))}


@pytest.fixture
def backend():
    return Reverser()


@pytest.fixture
def server(backend):
    with make_server(backend) as srv:
        yield srv


def post(server, path, body):
    return httpx.post(server.url + path, json=body, timeout=10)


def test_chat_response_follows_the_openai_schema(server, backend):
    body = {"model": "reverser", "messages": [{"role": "user", "content": "hello"}],
            "max_tokens": 5, "temperature": 0.7, "seed": 3}  # fmt: skip
    response = post(server, "/v1/chat/completions", body)
    assert response.status_code == 200
    data = response.json()
    assert data["id"].startswith("chatcmpl-") and data["object"] == "chat.completion"
    assert isinstance(data["created"], int) and data["model"] == "reverser"
    (choice,) = data["choices"]
    assert choice["index"] == 0 and choice["finish_reason"] == "stop"
    assert choice["message"] == {"role": "assistant", "content": "chat olleh"}
    assert "usage" not in data  # the backend has no tokenizer
    assert backend.calls == [
        {
            "prompts": ["hello"],
            "max_new_tokens": 5,
            "chat": True,
            "temperature": 0.7,
            "random_state": 3,
        }
    ]


def test_completions_answer_each_prompt_in_order(server, backend):
    response = post(server, "/v1/completions", {"prompt": ["ab", "cde"], "max_tokens": 4})
    data = response.json()
    assert data["object"] == "text_completion" and data["id"].startswith("cmpl-")
    assert [(c["index"], c["text"]) for c in data["choices"]] == [(0, "text ba"), (1, "text edc")]
    assert backend.calls[0]["chat"] is False and backend.calls[0]["temperature"] == 1.0


def test_conversation_without_template_is_a_role_transcript(server, backend):
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    post(server, "/v1/chat/completions", {"messages": messages})
    assert backend.calls[0]["prompts"] == ["system: Be brief.\nuser: Hi\nassistant:"]
    assert backend.calls[0]["chat"] is False


def test_text_parts_are_joined(server, backend):
    content = [{"type": "text", "text": "ab"}, {"type": "text", "text": "c"}]
    data = post(server, "/chat/completions", {"messages": [{"role": "user", "content": content}]})
    assert data.json()["choices"][0]["message"]["content"] == "chat cba"


def test_stop_strings_cut_the_text(server):
    data = post(server, "/v1/completions", {"prompt": "xyzabc", "stop": ["z", "b"]}).json()
    assert data["choices"][0]["text"] == "text c" and data["choices"][0]["finish_reason"] == "stop"


def test_usage_counts_tokens_and_length_finish():
    with make_server(Reverser(WordTokenizer())) as srv:
        data = post(srv, "/v1/completions", {"prompt": "one two three", "max_tokens": 4}).json()
        assert data["usage"] == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
        assert data["choices"][0]["finish_reason"] == "length"
        data = post(srv, "/v1/completions", {"prompt": "a b", "max_tokens": 4}).json()
        assert data["usage"]["completion_tokens"] == 3
        assert data["choices"][0]["finish_reason"] == "stop"


def test_without_a_tokenizer_the_finish_reason_cannot_say_length():
    """A model without a tokenizer (a RemoteModel behind the server, say) cannot have its answer
    counted: the same cut answer that reads "length" above reads "stop" (docs/llm-remote.md
    says so; review 55 found clients misled)."""
    with make_server(Reverser()) as srv:
        data = post(srv, "/v1/completions", {"prompt": "one two three", "max_tokens": 4}).json()
        assert data["choices"][0]["text"] == "text eerht owt eno"  # four words: at the budget
        assert data["choices"][0]["finish_reason"] == "stop"


class StrictTemplate(WordTokenizer):
    """A chat template that, like many, refuses conversations that do not alternate."""

    chat_template = "{{ raise_exception('roles must alternate') }}"

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True):
        raise ValueError("roles must alternate user/assistant")


def test_conversation_the_template_refuses_is_a_400():
    with make_server(Reverser(StrictTemplate())) as srv:
        messages = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
        response = post(srv, "/v1/chat/completions", {"messages": messages})
    assert response.status_code == 400
    assert "roles must alternate" in response.json()["error"]["message"]


def test_api_key_is_required_when_set():
    with make_server(Reverser(), api_key="sk-1") as srv:
        assert httpx.get(srv.url + "/v1/models", timeout=10).status_code == 401
        assert post(srv, "/v1/completions", {"prompt": "x"}).status_code == 401
        good = {"Authorization": "Bearer sk-1"}
        assert httpx.get(srv.url + "/v1/models", headers=good, timeout=10).status_code == 200
        response = httpx.post(
            srv.url + "/v1/completions", json={"prompt": "x"}, headers=good, timeout=10
        )
        assert response.status_code == 200


def test_models_and_health(server):
    data = httpx.get(server.url + "/v1/models", timeout=10).json()
    assert data["object"] == "list" and [m["id"] for m in data["data"]] == ["reverser"]
    assert httpx.get(server.url + "/health", timeout=10).json() == {"status": "ok"}


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "messages"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "user"}]}, "content"),
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "max_tokens"),
        ({"messages": [{"role": "user", "content": "x"}], "temperature": 5}, "temperature"),
        ({"messages": [{"role": "user", "content": "x"}], "stream": "yes"}, "stream"),
        ({"messages": [{"role": "user", "content": "x"}], "n": 0}, "n: "),
        ({"messages": [{"role": "user", "content": "x"}], "n": 65}, "n: "),
        ({"messages": [{"role": "user", "content": "x"}], "top_p": 0}, "top_p"),
        ({"messages": [{"role": "user", "content": "x"}], "seed": "s"}, "seed"),
        (
            {"messages": [{"role": "user", "content": "x"}], "seed": -1},
            "seed: expected null or an integer >= 0, got -1",
        ),  # JSON's words, not Python's
        ({"messages": [{"role": "user", "content": "x"}], "temperature": 2.5}, "temperature"),
        # float() would read these as 1.0, 0.5 and 1.0: a JSON bool or string is not a number
        ({"messages": [{"role": "user", "content": "x"}], "temperature": True}, "temperature"),
        ({"messages": [{"role": "user", "content": "x"}], "temperature": "0.5"}, "temperature"),
        ({"messages": [{"role": "user", "content": "x"}], "top_p": True}, "top_p"),
        ({"messages": [{"role": "user", "content": "x"}], "stop": 3}, "stop"),
        ([1, 2], "JSON object"),
    ],
)
def test_bad_requests_get_400_with_an_openai_error(server, backend, body, message):
    response = post(server, "/v1/chat/completions", body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert message in error["message"] and error["type"] == "invalid_request_error"
    assert backend.calls == []


def test_body_that_is_not_json_gets_400(server):
    response = httpx.post(server.url + "/v1/completions", content=b"{oops", timeout=10)
    assert response.status_code == 400 and "expected JSON" in response.json()["error"]["message"]


@pytest.mark.parametrize("length", ["-1", "-5", "x"])
def test_a_negative_or_unreadable_content_length_gets_400_at_once(server, length):
    body = b'{"prompt": "x"}'
    request = (
        f"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)  # the connection stays open: read(-1) would wait for it to close
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)  # a hang ends in socket.timeout, not in a stuck test
            if not chunk:
                break
            reply += chunk
    head, _, payload = reply.partition(b"\r\n\r\n")
    assert head.split()[1] == b"400", reply
    message = json.loads(payload)["error"]["message"]
    assert message == f"bad Content-Length {length!r}"


def test_unknown_model_and_path_get_404(server):
    response = post(server, "/v1/completions", {"model": "gpt-9", "prompt": "x"})
    assert response.status_code == 404 and "'reverser'" in response.json()["error"]["message"]
    assert post(server, "/v1/embeddings", {"input": "x"}).status_code == 404
    assert httpx.get(server.url + "/nothing", timeout=10).status_code == 404


def test_model_failure_is_a_500_and_the_server_lives_on(server):
    response = post(server, "/v1/completions", {"prompt": "explode"})
    assert response.status_code == 500 and "the model broke" in response.json()["error"]["message"]
    assert post(server, "/v1/completions", {"prompt": "ok"}).status_code == 200


def test_faults_hit_only_the_first_posts():
    faults = Faults(count=2, status=429, retry_after=3)
    with make_server(Reverser(), faults=faults) as srv:
        assert httpx.get(srv.url + "/v1/models", timeout=10).status_code == 200
        codes = [post(srv, "/v1/completions", {"prompt": "x"}) for _ in range(3)]
        assert [r.status_code for r in codes] == [429, 429, 200]
        assert codes[0].headers["Retry-After"] == "3"
        assert srv.n_requests == 4


def test_malformed_fault_answers_200_with_the_raw_body():
    with make_server(Reverser(), faults=Faults(malformed="<html>")) as srv:
        response = post(srv, "/v1/completions", {"prompt": "x"})
        assert response.status_code == 200 and response.text == "<html>"


def test_shutdown_frees_the_port_and_is_idempotent():
    srv = make_server(Reverser()).start()
    port = srv.port
    assert post(srv, "/v1/completions", {"prompt": "x"}).status_code == 200
    srv.shutdown()
    srv.shutdown()
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0


def test_serve_blocks_until_shut_down():
    ready = queue.Queue()
    thread = threading.Thread(target=serve, args=(Reverser(), "127.0.0.1", 0),
                              kwargs={"model_name": "r", "on_ready": ready.put})  # fmt: skip
    thread.start()
    srv = ready.get(timeout=30)
    try:
        data = post(srv, "/v1/completions", {"model": "r", "prompt": "ab"}).json()
        assert data["choices"][0]["text"] == "text ba"
        assert thread.is_alive()
    finally:
        srv.shutdown()
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_busy_port_is_a_resource_error(server):
    from trustlab.errors import ResourceError

    with pytest.raises(ResourceError, match=f"{server.port}"):
        make_server(Reverser(), port=server.port)


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"model": object()}, "model"),
        ({"port": 70000}, "port"),
        ({"port": -1}, "port"),
        ({"host": ""}, "host"),
        ({"host": "256.1.1.1"}, "host"),  # does not resolve
        ({"host": "192.0.2.1"}, "host"),  # not this machine's (TEST-NET-1)
        ({"model_name": ""}, "model_name"),
        ({"faults": "503"}, "faults"),
        ({"api_key": ""}, "api_key"),
        ({"max_batch_size": 0}, "max_batch_size"),
        ({"batch_window": -0.1}, "batch_window"),
        ({"batch_window": 5}, "batch_window"),
    ],
)
def test_bad_server_arguments(kwargs, argument):
    kwargs = {"model": Reverser(), **kwargs}
    with pytest.raises(InputError, match=f"^{argument}: expected"):
        make_server(**kwargs)


def test_a_model_name_is_loaded_only_after_the_arguments_are_checked(monkeypatch):
    import trustlab.llm.server as server_module

    loaded = []
    monkeypatch.setattr(server_module, "load_model", lambda name: loaded.append(name) or Reverser())
    with pytest.raises(InputError, match="^port: expected"):
        make_server("some-model", port=70000)
    assert loaded == []
    with make_server("some-model") as srv:
        assert loaded == ["some-model"] and srv.model_name == "reverser"
        assert post(srv, "/v1/completions", {"prompt": "ab"}).json()["choices"][0]["text"] == (
            "text ba"
        )


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"status": 200}, "status"),
        ({"count": -1}, "count"),
        ({"delay": -1.0}, "delay"),
        ({"retry_after": float("inf")}, "retry_after"),
    ],  # fmt: skip
)
def test_bad_faults(kwargs, argument):
    with pytest.raises(InputError, match=f"^{argument}: expected"):
        Faults(**kwargs)


# ---- streaming, n and the field rules for a text-only model (any LanguageModel) ----------------


def sse(response) -> list:
    """The JSON events of a raw server-sent-event body, checking the wire format on the way."""
    text = response.read().decode()
    assert text.endswith("data: [DONE]\n\n")
    events = text.split("\n\n")[:-2]
    assert all(e.startswith("data: ") and "\n" not in e for e in events)
    return [json.loads(e[len("data: ") :]) for e in events]


def test_stream_wire_format(server):
    body = {"messages": [{"role": "user", "content": "hello"}], "stream": True}
    with httpx.stream("POST", server.url + "/v1/chat/completions", json=body, timeout=10) as r:
        assert r.status_code == 200 and r.headers["content-type"] == "text/event-stream"
        assert r.headers["transfer-encoding"] == "chunked"
        events = sse(r)
    assert [e["object"] for e in events] == ["chat.completion.chunk"] * 3
    assert [e["choices"][0]["delta"] for e in events] == [
        {"role": "assistant", "content": ""}, {"content": "chat olleh"}, {}
    ]  # fmt: skip
    assert [e["choices"][0]["finish_reason"] for e in events] == [None, None, "stop"]
    assert "usage" not in events[0]


def test_a_text_only_model_streams_its_whole_answer_with_usage_through_the_client():
    with (
        make_server(Reverser(WordTokenizer())) as srv,
        openai.OpenAI(base_url=srv.url + "/v1", api_key="x", max_retries=0) as client,
    ):
        chunks = list(client.completions.create(
            model="reverser", prompt="a b c", max_tokens=9, stream=True,
            stream_options={"include_usage": True},
        ))  # fmt: skip
        whole = client.completions.create(model="reverser", prompt="a b c", max_tokens=9)
    assert "".join(c.choices[0].text for c in chunks if c.choices) == "text c b a"
    assert chunks[-1].choices == [] and chunks[-1].usage == whole.usage
    assert whole.usage.prompt_tokens == 3 and whole.usage.completion_tokens == 4


def test_n_repeats_the_prompt_for_a_text_only_model(server, backend):
    data = post(server, "/v1/completions", {"prompt": ["ab", "c"], "n": 2}).json()
    assert [(c["index"], c["text"]) for c in data["choices"]] == [
        (0, "text ba"), (1, "text ba"), (2, "text c"), (3, "text c")
    ]  # fmt: skip
    assert backend.calls[0]["prompts"] == ["ab", "ab", "c", "c"]


@pytest.mark.parametrize(
    ("body", "field"),
    [({"logprobs": True}, "logprobs"), ({"top_p": 0.5}, "top_p")],
)
def test_what_a_text_only_model_cannot_do_is_a_400(server, backend, body, field):
    body = {"messages": [{"role": "user", "content": "x"}], **body}
    error = post(server, "/v1/chat/completions", body).json()["error"]
    assert error["param"] == field and error["message"].startswith(f"{field}: not supported")
    assert backend.calls == []


CHAT_REFUSED = [
    ("tools", [{"type": "function", "function": {"name": "f"}}]),
    ("tool_choice", "required"),
    ("functions", [{"name": "f"}]),
    ("function_call", {"name": "f"}),
    ("response_format", {"type": "json_object"}),
    ("logit_bias", {"50256": -100}),
    ("frequency_penalty", 0.5),
    ("presence_penalty", -1),
    ("audio", {"voice": "alloy", "format": "wav"}),
    ("modalities", ["text", "audio"]),
    ("prediction", {"type": "content", "content": "x"}),
    ("reasoning_effort", "low"),
    ("verbosity", "low"),
    ("web_search_options", {}),
    ("store", True),
    ("service_tier", "flex"),
]
CHAT_ACCEPTED = {
    "frequency_penalty": 0, "presence_penalty": 0.0, "logit_bias": {}, "tools": [],
    "tool_choice": "none", "parallel_tool_calls": False, "response_format": {"type": "text"},
    "modalities": ["text"], "store": False, "service_tier": "auto", "user": "me",
    "metadata": {"run": "1"}, "safety_identifier": "u1", "prompt_cache_key": "k",
}  # fmt: skip


@pytest.mark.parametrize(("field", "value"), CHAT_REFUSED)
def test_the_client_gets_a_400_naming_an_unsupported_chat_field(server, backend, field, value):
    with openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0) as client:
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(
                model="reverser", messages=[{"role": "user", "content": "x"}], **{field: value}
            )
    assert info.value.param == field and f"400 - {field}: not supported" in info.value.message
    assert backend.calls == []


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"echo": True}, "echo"),
        ({"suffix": "end"}, "suffix"),
        ({"best_of": 3}, "best_of"),
        ({"logit_bias": {"1": 1}}, "logit_bias"),
        ({"extra_body": {"top_k": 4}}, "top_k"),
        ({"extra_body": {"repetition_penalty": 1.1}}, "repetition_penalty"),
        (
            {"stream": True, "stream_options": {"include_obfuscation": True}},
            "stream_options.include_obfuscation",
        ),
        ({"logprobs": 21}, "logprobs"),
    ],  # fmt: skip
)
def test_the_client_gets_a_400_naming_an_unsupported_completions_field(
    server, backend, kwargs, field
):
    with openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0) as client:
        with pytest.raises(openai.BadRequestError) as info:
            client.completions.create(model="reverser", prompt="x", **kwargs)
    assert info.value.param == field and f"400 - {field}: " in info.value.message
    assert backend.calls == []


def test_fields_at_their_off_value_are_accepted(server, backend):
    body = {"messages": [{"role": "user", "content": "ab"}], **CHAT_ACCEPTED}
    assert post(server, "/v1/chat/completions", body).json()["choices"][0]["message"] == {
        "role": "assistant", "content": "chat ba"
    }  # fmt: skip
    body = {"prompt": "ab", "echo": False, "suffix": "", "best_of": 1, "n": 1, "seed": None}
    assert post(server, "/v1/completions", body).status_code == 200
    assert len(backend.calls) == 2


def test_smollm2_conversation_uses_its_chat_template(smollm2):
    import torch

    messages = [{"role": "system", "content": "Answer in French."},
                {"role": "user", "content": "Name a colour."}]  # fmt: skip
    tokenizer = smollm2.tokenizer
    ids = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=True, return_dict=True
    )["input_ids"]
    with torch.inference_mode():
        tokens = smollm2.model.generate(
            torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            max_new_tokens=8, do_sample=False, pad_token_id=tokenizer.eos_token_id,
        )  # fmt: skip
    expected = tokenizer.decode(tokens[0, len(ids) :], skip_special_tokens=True)
    with make_server(smollm2) as srv:
        body = {"model": smollm2.name, "messages": messages, "max_tokens": 8, "temperature": 0}
        data = post(srv, "/v1/chat/completions", body).json()
    assert data["choices"][0]["message"]["content"] == expected
    assert data["usage"]["prompt_tokens"] == len(ids)
    assert data["usage"]["total_tokens"] == len(ids) + data["usage"]["completion_tokens"]
