"""The official ``openai`` client against ``make_server`` over SmolLM2: every feature it uses.

Chat and completions, streaming (with ``include_usage``), logprobs checked against the model's own
log-softmax, ``n``, ``seed``, ``stop``, ``max_tokens``/``max_completion_tokens``, 400s that name
unsupported fields, batched serving equal to one-at-a-time serving, and clients that hang up.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import openai
import pytest

from trustlab.llm import make_server

MODEL = "smollm2-135m-instruct"
QUESTION = "What is the capital of France?"

# 32 requests of different prompt lengths, endpoints and token budgets
CHAT_PROMPTS = [
    "Name a colour.", "What is 2 + 2?", "Write one short sentence about rain.",
    "Translate 'good morning' into French.", "Give me a word that rhymes with cat.",
    "What is the largest planet in our solar system?", "Why is the sky blue?", "Name a fruit.",
    "Tell me a fun fact about octopuses and their three hearts, please.",
    "Write a haiku about winter mornings in a quiet mountain village.",
    "What is the boiling point of water?", "List three primary colours.",
    "Who wrote Romeo and Juliet?", "Suggest a name for a small grey cat.", "What does a bee make?",
    "Describe the smell of fresh bread in one sentence.",
]  # fmt: skip
TEXT_PROMPTS = [
    "The capital of France is", "One, two, three,", "def fibonacci(n):", "Once upon a time",
    "The quick brown fox", "Water boils at", "My favourite season is", "In 1969, the first",
    "Roses are red,", "The opposite of hot is", "A B C D", "import numpy as",
    "The sun rises in the", "Monday, Tuesday,", "Dear Sir or Madam,", "2, 4, 6, 8,",
]  # fmt: skip
REQUESTS = [("chat", p, 3 + i % 4) for i, p in enumerate(CHAT_PROMPTS)] + [
    ("text", p, 3 + i % 4) for i, p in enumerate(TEXT_PROMPTS)
]


@pytest.fixture(scope="module")
def server(smollm2):
    with make_server(smollm2) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server):
    with openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=300) as c:
        yield c


@pytest.fixture(scope="module")
def sequential(smollm2):
    """The texts of REQUESTS from one-at-a-time serving (max_batch_size=1), one after another."""
    with make_server(smollm2, max_batch_size=1) as srv:
        with openai.OpenAI(base_url=srv.url + "/v1", api_key="x", max_retries=0) as c:
            texts = [ask(c, request) for request in REQUESTS]
        assert srv.largest_batch == 1
    return texts


def ask(client, request, **kwargs):
    kind, prompt, max_tokens = request
    if kind == "chat":
        messages = [{"role": "user", "content": prompt}]
        response = client.chat.completions.create(
            model=MODEL, messages=messages, max_tokens=max_tokens, temperature=0, **kwargs
        )
        return response.choices[0].message.content
    response = client.completions.create(
        model=MODEL, prompt=prompt, max_tokens=max_tokens, temperature=0, **kwargs
    )
    return response.choices[0].text


def ask_streaming(client, request):
    kind, prompt, max_tokens = request
    if kind == "chat":
        messages = [{"role": "user", "content": prompt}]
        chunks = client.chat.completions.create(
            model=MODEL, messages=messages, max_tokens=max_tokens, temperature=0, stream=True
        )
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    chunks = client.completions.create(
        model=MODEL, prompt=prompt, max_tokens=max_tokens, temperature=0, stream=True
    )
    return "".join(c.choices[0].text for c in chunks if c.choices)


def chat(client, content=QUESTION, **kwargs):
    kwargs.setdefault("temperature", 0)
    messages = [{"role": "user", "content": content}]
    return client.chat.completions.create(model=MODEL, messages=messages, **kwargs)


def chat_ids(lm, content):
    return lm.tokenizer.apply_chat_template(
        [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=True,
        return_dict=True,
    )["input_ids"]  # fmt: skip


# ---- chat and completions -------------------------------------------------------------------


def test_chat_answers_as_local_generation_with_exact_usage(client, smollm2):
    response = chat(client, max_tokens=4)
    (choice,) = response.choices
    assert choice.message.role == "assistant"
    assert choice.message.content == smollm2.generate([QUESTION], 4)[0]
    assert choice.finish_reason == "length" and choice.logprobs is None
    usage = response.usage
    assert usage.prompt_tokens == len(chat_ids(smollm2, QUESTION))
    assert usage.completion_tokens == 4 and usage.total_tokens == usage.prompt_tokens + 4
    assert response.object == "chat.completion" and response.model == MODEL


def test_completions_answer_each_prompt_in_order(client, smollm2):
    prompts = ["The capital of France is", "One, two, three,"]
    response = client.completions.create(model=MODEL, prompt=prompts, max_tokens=5, temperature=0)
    assert [c.index for c in response.choices] == [0, 1]
    assert [c.text for c in response.choices] == smollm2.generate(prompts, 5, chat=False)
    n_prompt = sum(len(smollm2.tokenizer(p).input_ids) for p in prompts)
    assert response.usage.prompt_tokens == n_prompt


# ---- streaming ------------------------------------------------------------------------------


def test_chat_stream_is_the_answer_in_pieces_with_a_usage_chunk(client):
    whole = chat(client, max_tokens=6)
    chunks = list(chat(client, max_tokens=6, stream=True, stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [c.choices[0].delta.content for c in chunks[1:] if c.choices]
    assert "".join(p or "" for p in pieces) == whole.choices[0].message.content
    assert len([p for p in pieces if p]) >= 3  # token by token, not one block
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "length" and set(finishes[:-1]) == {None}
    assert chunks[-1].choices == [] and chunks[-1].usage == whole.usage
    assert all(c.usage is None for c in chunks[:-1])
    assert {c.id for c in chunks} == {chunks[0].id} and chunks[0].object == "chat.completion.chunk"


def test_completion_stream_with_several_prompts_and_choices(client):
    prompts = ["The capital of France is", "One, two, three,"]
    whole = client.completions.create(model=MODEL, prompt=prompts, n=2, max_tokens=5, temperature=0)
    texts, finishes = {}, {}
    for chunk in client.completions.create(
        model=MODEL, prompt=prompts, n=2, max_tokens=5, temperature=0, stream=True
    ):
        for choice in chunk.choices:
            texts[choice.index] = texts.get(choice.index, "") + choice.text
            if choice.finish_reason:
                finishes[choice.index] = choice.finish_reason
    assert texts == {c.index: c.text for c in whole.choices} and len(texts) == 4
    assert finishes == {c.index: c.finish_reason for c in whole.choices}
    assert texts[0] == texts[1] and texts[2] == texts[3]  # greedy: the choices agree


# ---- log-probabilities ----------------------------------------------------------------------


def test_chat_logprobs_are_the_models_log_softmax(client, smollm2, direct_greedy):
    response = chat(client, max_tokens=6, logprobs=True, top_logprobs=3)
    content = response.choices[0].logprobs.content
    oracle = direct_greedy(smollm2, chat_ids(smollm2, QUESTION), 6, top=3)
    assert len(content) == len(oracle)
    assert "".join(e.token for e in content) == response.choices[0].message.content
    for entry, (token, value, top) in zip(content, oracle, strict=True):
        assert entry.token == smollm2.tokenizer.decode([token])
        assert entry.logprob == pytest.approx(value, abs=1e-4)
        assert entry.bytes == list(entry.token.encode())
        assert [t.token for t in entry.top_logprobs] == [
            smollm2.tokenizer.decode([i]) for i, _ in top
        ]
        np.testing.assert_allclose([t.logprob for t in entry.top_logprobs], [v for _, v in top],
                                   rtol=0, atol=1e-4)  # fmt: skip


def test_completion_logprobs_are_the_models_log_softmax(client, smollm2, direct_greedy):
    prompt = "The capital of France is"
    response = client.completions.create(
        model=MODEL, prompt=prompt, max_tokens=5, temperature=0, logprobs=2
    )
    (choice,) = response.choices
    logprobs = choice.logprobs
    oracle = direct_greedy(smollm2, smollm2.tokenizer(prompt).input_ids, 5, top=2)
    assert "".join(logprobs.tokens) == choice.text
    np.testing.assert_allclose(logprobs.token_logprobs, [v for _, v, _ in oracle], atol=1e-4)
    for top, (_, _, expected) in zip(logprobs.top_logprobs, oracle, strict=True):
        assert list(top) == [smollm2.tokenizer.decode([i]) for i, _ in expected]
    lengths = np.cumsum([0] + [len(t) for t in logprobs.tokens[:-1]])
    assert logprobs.text_offset == lengths.tolist()


def test_streamed_logprobs_equal_the_whole_answers(client):
    whole = chat(client, max_tokens=5, logprobs=True, top_logprobs=2).choices[0].logprobs.content
    streamed = [
        entry
        for chunk in chat(client, max_tokens=5, logprobs=True, top_logprobs=2, stream=True)
        if chunk.choices and chunk.choices[0].logprobs
        for entry in chunk.choices[0].logprobs.content
    ]
    assert [(e.token, e.logprob) for e in streamed] == [(e.token, e.logprob) for e in whole]


# ---- n, seed, stop, token budgets -----------------------------------------------------------


def test_n_choices_agree_when_greedy_and_repeat_with_a_seed(client):
    greedy = chat(client, max_tokens=5, n=3)
    assert [c.index for c in greedy.choices] == [0, 1, 2]
    assert len({c.message.content for c in greedy.choices}) == 1
    sampled = [
        [c.message.content for c in chat(client, max_tokens=6, n=4, temperature=1.0,
                                         seed=11).choices]
        for _ in range(2)
    ]  # fmt: skip
    assert sampled[0] == sampled[1] and len(set(sampled[0])) > 1


def test_seed_repeats_a_sample_and_other_seeds_differ(client):
    def sample(seed):
        return chat(client, "Tell me a story.", max_tokens=6, temperature=1.0, seed=seed)

    first = sample(1).choices[0].message.content
    assert sample(1).choices[0].message.content == first
    assert {sample(s).choices[0].message.content for s in (2, 3)} != {first}


def test_stop_cuts_the_text_before_the_stop_sequence(client):
    full = chat(client, max_tokens=8).choices[0].message.content
    assert full.startswith("The capital of France is")
    one = chat(client, max_tokens=8, stop=" is").choices[0]
    assert one.message.content == "The capital of France" and one.finish_reason == "stop"
    several = chat(client, max_tokens=8, stop=["France", "capital"]).choices[0]
    assert several.message.content == "The "
    streamed = "".join(
        c.choices[0].delta.content or ""
        for c in chat(client, max_tokens=8, stop=["France"], stream=True)
        if c.choices
    )
    assert streamed == "The capital of "
    text = client.completions.create(
        model=MODEL, prompt="One, two, three,", max_tokens=8, temperature=0, stop=[","]
    ).choices[0]
    assert "," not in text.text and text.finish_reason == "stop"


def test_max_tokens_and_max_completion_tokens_bound_the_answer(client):
    for kwargs, n in (({"max_completion_tokens": 3}, 3), ({"max_tokens": 2}, 2)):
        response = chat(client, "Tell me a long story.", **kwargs)
        assert response.usage.completion_tokens == n
        assert response.choices[0].finish_reason == "length"
    response = client.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=2)
    assert response.usage.completion_tokens == 2
    with pytest.raises(openai.BadRequestError) as info:
        chat(client, max_tokens=3, max_completion_tokens=4)
    assert info.value.param == "max_completion_tokens"


# ---- what is not supported -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"frequency_penalty": 0.5}, "frequency_penalty"),
        ({"logit_bias": {"17": 5}}, "logit_bias"),
        ({"extra_body": {"top_k": 5}}, "top_k"),
        ({"top_logprobs": 2}, "top_logprobs"),  # without logprobs
        ({"logprobs": True, "top_logprobs": 21}, "top_logprobs"),
        ({"stream_options": {"include_usage": True}}, "stream_options"),  # without stream
        ({"max_tokens": 9000}, "max_tokens"),  # beyond the model's context
    ],
)
def test_unsupported_fields_get_a_400_that_names_them(client, kwargs, field):
    with pytest.raises(openai.BadRequestError) as info:
        chat(client, max_tokens=kwargs.pop("max_tokens", 2), **kwargs)
    assert info.value.status_code == 400 and info.value.param == field
    assert f"400 - {field}: " in info.value.message  # the client puts "Error code: 400 - " first


def test_off_values_of_unsupported_fields_are_accepted(client):
    response = chat(client, max_tokens=2, frequency_penalty=0, presence_penalty=0,
                    response_format={"type": "text"}, user="me", logit_bias={})  # fmt: skip
    assert response.choices[0].message.content


# ---- batching, load and clients that hang up ------------------------------------------------


def test_concurrent_requests_are_batched_and_answer_as_sequential_serving(server, sequential):
    batches = server.n_batches
    with (
        ThreadPoolExecutor(len(REQUESTS)) as pool,
        openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=300) as c,
    ):
        texts = list(pool.map(lambda r: ask(c, r), REQUESTS))
    assert texts == sequential
    assert server.n_batches - batches < len(REQUESTS) and server.largest_batch > 1


def hang_up_mid_request(server, whole_body: bool) -> None:
    """Send a request (or half of one) and close the connection without reading."""
    body = json.dumps({"model": MODEL, "prompt": "Once upon a time", "max_tokens": 200}).encode()
    head = (f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(head + (body if whole_body else body[: len(body) // 2]))


def hang_up_mid_stream(client) -> None:
    stream = chat(client, "Write a long story about the sea.", max_tokens=200, stream=True)
    chunks = iter(stream)
    next(chunks), next(chunks)
    stream.close()


def wait_for(condition, seconds=120.0):
    """Poll until ``condition()`` holds (a bounded wait, not a timing assertion)."""
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.05)
    return condition()


def test_64_requests_and_8_clients_that_hang_up(server, client, sequential):
    jobs = [(ask, r) for r in REQUESTS] + [(ask_streaming, r) for r in REQUESTS]  # 64, 32 streams
    with ThreadPoolExecutor(len(jobs) + 8) as pool:
        leaving = [pool.submit(hang_up_mid_request, server, k % 2 == 0) for k in range(4)]
        leaving += [pool.submit(hang_up_mid_stream, client) for _ in range(4)]
        answers = [pool.submit(fn, client, request) for fn, request in jobs]
        texts = [a.result() for a in answers]
        for job in leaving:
            job.result()
    assert texts == sequential + sequential
    assert wait_for(lambda: server.in_flight == 0)
    # still deterministic afterwards
    assert [ask(client, r) for r in REQUESTS[::8]] == sequential[::8]


def test_a_client_leaving_mid_stream_is_dropped_while_the_others_are_served(
    server, client, sequential
):
    abandoned = server.n_abandoned
    with ThreadPoolExecutor(4) as pool:
        others = [pool.submit(ask_streaming, client, r) for r in REQUESTS[:3]]
        stream = chat(client, "Write a long story about the sea.", max_tokens=200, stream=True)
        chunks = iter(stream)
        next(chunks), next(chunks)
        stream.close()  # hangs up with ~195 tokens to go
        assert [o.result() for o in others] == sequential[:3]
    assert wait_for(lambda: server.n_abandoned > abandoned)
    assert wait_for(lambda: server.in_flight == 0)


def test_shutdown_answers_waiting_requests(smollm2):
    srv = make_server(smollm2).start()
    outcome = {}

    def request():
        with openai.OpenAI(base_url=srv.url + "/v1", api_key="x", max_retries=0) as c:
            try:
                outcome["text"] = ask(c, ("chat", "Write a long story.", 200))
            except openai.APIError as exc:
                outcome["error"] = exc

    thread = threading.Thread(target=request)
    thread.start()
    assert wait_for(lambda: srv.n_batches > 0)
    srv.shutdown()
    thread.join(timeout=60)
    assert not thread.is_alive() and set(outcome) in ({"text"}, {"error"})


def test_a_model_failure_mid_stream_ends_that_stream_with_an_error_and_the_server_lives_on(
    server, client, smollm2, sequential
):
    calls = []

    def fail_on_the_third_pass(h):
        calls.append(h.shape)
        if len(calls) == 3:
            raise RuntimeError("the model broke")
        return h

    with smollm2.intervene(20, fail_on_the_third_pass):
        stream = chat(client, max_tokens=8, stream=True)
        with pytest.raises(openai.APIError, match="the model broke"):
            for _ in stream:
                pass
    assert ask(client, REQUESTS[0]) == sequential[0]


def test_one_message_chat_without_a_chat_template_is_a_400(client, smollm2, monkeypatch):
    monkeypatch.setattr(smollm2.tokenizer, "chat_template", None)
    with pytest.raises(openai.BadRequestError) as info:
        chat(client, max_tokens=2)
    assert info.value.param == "messages" and "/v1/completions" in info.value.message
