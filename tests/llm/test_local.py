"""trustlab.llm.LocalModel: generation, activations, interventions, logprobs, bad input.

Every model-level check uses the session-wide SmolLM2 (fixture ``smollm2``) and compares against
the plain transformers model run on one unpadded prompt at a time.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.errors import InputError
from trustlab.llm import local

# different token lengths, so every batch below is padded
PROMPTS = [
    "What is the capital of France?",
    "Name a colour.",
    "Write one short sentence about rain.",
]
CONTINUATIONS = [" Paris is the capital.", " Blue", " It falls softly."]
MAX_NEW = 8


def hf_hidden_states(lm, text: str) -> tuple:
    """transformers' own hidden states for one unpadded prompt (the oracle)."""
    ids = lm.tokenizer(text, return_tensors="pt").input_ids
    with torch.inference_mode():
        return lm.model(ids, output_hidden_states=True).hidden_states


def hf_logprob(lm, prompt: str, continuation: str) -> float:
    """Sum of float64 log-softmax of the continuation tokens, from full unpadded logits."""
    p = lm.tokenizer(prompt).input_ids
    c = lm.tokenizer(continuation, add_special_tokens=False).input_ids
    with torch.inference_mode():
        logits = lm.model(torch.tensor([p + c])).logits[0].double()
    logp = torch.log_softmax(logits, dim=-1)
    return sum(float(logp[len(p) - 1 + k, tok]) for k, tok in enumerate(c))


def layer_hooks(lm) -> list[set]:
    """Ids of the forward hooks on each decoder layer (transformers keeps its own capture hooks)."""
    return [set(layer._forward_hooks) for layer in lm.model.model.layers]


@pytest.fixture(scope="module")
def sentiment_vector(smollm2):
    pos = smollm2.activations(["I love this!", "What a wonderful day."], 15, "mean")
    neg = smollm2.activations(["I hate this!", "What an awful day."], 15, "mean")
    return pos.mean(axis=0) - neg.mean(axis=0)


@pytest.fixture(scope="module")
def generations(smollm2):
    """Greedy chat generations of PROMPTS in one padded batch: the baseline other tests compare to."""
    return smollm2.generate(PROMPTS, MAX_NEW, batch_size=len(PROMPTS))


# ---- generation ----------------------------------------------------------------------------------


def test_greedy_generation_is_deterministic(smollm2, generations):
    assert smollm2.generate(PROMPTS, MAX_NEW, batch_size=len(PROMPTS)) == generations
    assert all(text.strip() for text in generations)


def test_batched_generation_equals_one_at_a_time(smollm2, generations):
    assert [smollm2.generate(p, MAX_NEW)[0] for p in PROMPTS] == generations


def test_generation_equals_transformers_greedy_with_the_chat_template(smollm2, generations):
    tok = smollm2.tokenizer
    text = tok.apply_chat_template(
        [{"role": "user", "content": PROMPTS[0]}], add_generation_prompt=True, tokenize=False
    )
    ids = tok(text, add_special_tokens=False, return_tensors="pt").input_ids
    with torch.inference_mode():
        out = smollm2.model.generate(ids, max_new_tokens=MAX_NEW, do_sample=False)
    assert generations[0] == tok.decode(out[0, ids.shape[1] :], skip_special_tokens=True)


def test_sampling_with_a_seed_repeats_and_leaves_torch_rng_alone(smollm2):
    state = torch.get_rng_state()
    first = smollm2.generate(PROMPTS[:2], 4, temperature=1.0, random_state=7)
    second = smollm2.generate(PROMPTS[:2], 4, temperature=1.0, random_state=7)
    assert first == second
    assert torch.equal(torch.get_rng_state(), state)
    # a numpy Generator gives one seed: the same generator state, the same text
    drawn = [
        smollm2.generate(PROMPTS[:2], 4, temperature=1.0, random_state=np.random.default_rng(3))
        for _ in range(2)
    ]
    assert drawn[0] == drawn[1]


@pytest.mark.parametrize("temperature", [1e-40, 5e-324])
def test_a_vanishing_temperature_decodes_greedily(smollm2, generations, temperature):
    # logits / 1e-40 overflow float32: softmax gave NaN and sampling raised a RuntimeError;
    # the limit of sampling as the temperature goes to 0 is greedy decoding
    prompts, n = PROMPTS[:2], MAX_NEW
    assert smollm2.generate(prompts, n, batch_size=2, temperature=temperature) == generations[:2]
    done = smollm2.completions(prompts, n, batch_size=2, temperature=temperature, random_state=1)
    assert [c.text for c in done] == generations[:2]


def test_chat_on_a_model_without_a_template_raises(smollm2, monkeypatch):
    monkeypatch.setattr(smollm2.tokenizer, "chat_template", None)
    assert smollm2.has_chat_template is False
    with pytest.raises(InputError) as info:
        smollm2.generate("hello", 4)
    assert info.value.argument == "chat"


# ---- activations ---------------------------------------------------------------------------------


def test_activations_of_the_same_inputs_equal_transformers_hidden_states(smollm2):
    """Unpadded, one prompt at a time: the same computation, so equal to 1e-5 (rel and abs)."""
    layers = [0, 7, 28]
    for text in PROMPTS:
        acts = smollm2.activations([text], layers, "all", batch_size=1)[0]
        hidden = hf_hidden_states(smollm2, text)
        for k, layer in enumerate(layers):
            ref = hidden[layer + 1][0].numpy()
            np.testing.assert_allclose(acts[:, k], ref, rtol=1e-5, atol=1e-5)


def test_padded_batch_activations_equal_transformers_hidden_states(smollm2):
    layers = [0, 7, 28]
    ours = smollm2.activations(PROMPTS, layers, "all", batch_size=len(PROMPTS))
    for text, acts in zip(PROMPTS, ours, strict=True):
        hidden = hf_hidden_states(smollm2, text)
        assert acts.dtype == np.float32 and acts.shape == (hidden[0].shape[1], 3, 576)
        for k, layer in enumerate(layers):
            ref = hidden[layer + 1][0].numpy()
            # fp32 rounding only: entries reach ~1e3 (token 0 is an attention sink)
            np.testing.assert_allclose(acts[:, k], ref, rtol=0, atol=1e-5 * np.abs(ref).max())


def test_bfloat16_activations_equal_transformers_under_autocast(smollm2):
    """``autocast="bfloat16"`` is transformers' forward under ``torch.autocast`` (computed here,
    one unpadded prompt at a time): equal to bfloat16 rounding; and it is not the float32
    forward (it moves activations by about 1 % of their norm, not by 0 and not by 10 %)."""
    for text in PROMPTS:
        ours = smollm2.activations([text], 15, "all", batch_size=1, autocast="bfloat16")[0]
        ids = smollm2.tokenizer(text, return_tensors="pt").input_ids
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
            ref = smollm2.model(ids, output_hidden_states=True).hidden_states[16][0].float()
        ref = ref.numpy()
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-6 * np.abs(ref).max())
        full = hf_hidden_states(smollm2, text)[16][0].numpy()
        moved = np.linalg.norm(ours[1:] - full[1:]) / np.linalg.norm(full[1:])
        assert 1e-4 < moved < 0.05, moved
    with pytest.raises(InputError) as err:
        smollm2.activations(PROMPTS, 15, autocast="float16")
    assert err.value.argument == "autocast"


def test_last_layer_is_the_output_before_the_final_norm(smollm2):
    last = smollm2.n_layers - 1
    ours = smollm2.activations(PROMPTS[:2], last, "all", batch_size=2)
    for text, acts in zip(PROMPTS[:2], ours, strict=True):
        ref = hf_hidden_states(smollm2, text)[-1][0].numpy()  # transformers applies the norm
        with torch.inference_mode():
            normed = smollm2.model.model.norm(torch.from_numpy(acts)).numpy()
        np.testing.assert_allclose(normed, ref, rtol=0, atol=1e-5 * np.abs(ref).max())


def test_last_and_mean_positions_reduce_the_all_positions(smollm2):
    one_token = "Hi"
    assert len(smollm2.tokenizer(one_token).input_ids) == 1
    prompts = [*PROMPTS, one_token]
    every = smollm2.activations(prompts, [3, 12], "all")
    last = smollm2.activations(prompts, [3, 12], "last")
    mean = smollm2.activations(prompts, [3, 12], "mean")
    single_layer = smollm2.activations(prompts, 12, "last")
    assert last.shape == mean.shape == (4, 2, 576) and single_layer.shape == (4, 576)
    assert last.dtype == mean.dtype == np.float32
    for i, acts in enumerate(every):
        np.testing.assert_allclose(last[i], acts[-1], rtol=1e-6, atol=1e-6)
        expected = acts[1:].mean(axis=0) if len(acts) > 1 else acts[0]  # token 0 left out
        np.testing.assert_allclose(mean[i], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(single_layer, last[:, 1], rtol=1e-6, atol=1e-6)


# ---- interventions -------------------------------------------------------------------------------


def test_zero_steering_vector_leaves_generation_identical(smollm2, generations):
    with smollm2.steer(np.zeros(smollm2.hidden_size), layer=15, scale=3.0):
        steered = smollm2.generate(PROMPTS, MAX_NEW, batch_size=len(PROMPTS))
    assert steered == generations


def test_nonzero_steering_vector_changes_generation(smollm2, sentiment_vector, generations):
    with smollm2.steer(sentiment_vector, layer=15, scale=4.0):
        steered = smollm2.generate(PROMPTS[2], MAX_NEW)
    assert steered != generations[2:]


def test_steering_adds_the_vector_to_that_layer_output(smollm2, sentiment_vector):
    base = smollm2.activations(PROMPTS, 15, "all")
    with smollm2.steer(sentiment_vector, layer=15, scale=0.5):
        steered = smollm2.activations(PROMPTS, 15, "all")
    for b, s in zip(base, steered, strict=True):
        np.testing.assert_allclose(
            s - b, np.broadcast_to(0.5 * sentiment_vector, b.shape), atol=2e-3
        )


def test_no_hook_remains_after_exit_or_an_error(smollm2, sentiment_vector):
    before = layer_hooks(smollm2)
    with smollm2.steer(sentiment_vector, layer=15), smollm2.intervene(3, lambda h: h):
        during = layer_hooks(smollm2)
        assert [len(d - b) for d, b in zip(during, before, strict=True)].count(1) == 2
        assert len(during[15] - before[15]) == len(during[3] - before[3]) == 1
    assert layer_hooks(smollm2) == before
    with pytest.raises(RuntimeError, match="inside"):
        with smollm2.steer(sentiment_vector, layer=15):
            raise RuntimeError("inside the block")
    assert layer_hooks(smollm2) == before
    smollm2.activations(PROMPTS[:1], [2, 20], "last")  # its capture hooks too
    assert layer_hooks(smollm2) == before


def test_intervention_runs_on_the_prompt_and_every_new_token(smollm2):
    lengths = []

    def record(h):
        lengths.append(h.shape[1])
        return h

    prompt_length = len(smollm2.tokenizer("Count: one, two,").input_ids)
    with smollm2.intervene(5, record):
        smollm2.generate("Count: one, two,", 4, chat=False)
    assert lengths[0] == prompt_length
    assert len(lengths) >= 2 and set(lengths[1:]) == {1}  # one pass per generated token


def test_intervention_returning_a_wrong_shape_raises_and_cleans_up(smollm2):
    before = layer_hooks(smollm2)
    with pytest.raises(InputError) as info:
        with smollm2.intervene(5, lambda h: h[:, :1]):
            smollm2.activations(PROMPTS[:1], 10)
    assert info.value.argument == "fn"
    assert layer_hooks(smollm2) == before


# ---- logprobs ------------------------------------------------------------------------------------


def test_logprobs_equal_a_direct_computation(smollm2):
    """One row per pass, unpadded, as the oracle: equal up to float32 rounding. On one CPU the
    two agreed to 1e-9; on an AMD EPYC with AVX-512 the output layer over the kept positions
    only (``logits_to_keep``) took another matmul blocking than the oracle's over every
    position, and one sum of -8.57 differed by 8.9e-7 (1.0e-7 relative, about one float32 ulp).
    A position or token bug moves a sum by nats; the tolerance is 1e-6 relative."""
    ours = smollm2.logprobs(PROMPTS, CONTINUATIONS, batch_size=1)
    expected = [hf_logprob(smollm2, p, c) for p, c in zip(PROMPTS, CONTINUATIONS, strict=True)]
    assert ours.dtype == np.float64 and ours.shape == (3,)
    np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=0)


# Padded batches take other float32 paths through 30 layers (another matmul blocking, masked
# attention): on one CPU the batched sums differed from the unpadded ones by up to 1.4e-5 on a
# log-probability of -8.6 (1.6e-6 relative), on another by under 1e-5. A padding or position bug
# moves them by 0.1 or more; the tolerance is relative, 1e-5 of the sum.
BATCH_RTOL = 1e-5


def test_batched_logprobs_equal_one_at_a_time(smollm2):
    for chat in (False, True):
        batched = smollm2.logprobs(PROMPTS, CONTINUATIONS, chat=chat, batch_size=3)
        single = smollm2.logprobs(PROMPTS, CONTINUATIONS, chat=chat, batch_size=1)
        np.testing.assert_allclose(batched, single, rtol=BATCH_RTOL, atol=0)


def test_a_shared_prefix_runs_once_and_gives_the_same_logprobs(smollm2, monkeypatch):
    """``share_prefix=True`` on a few-shot prompt shared by every row: one pass over the shared
    tokens (a spy counts the rows the model sees) and the same totals as the plain path up to
    float32 rounding of the split attention (sums of about ten tokens: measured 2e-5 at most;
    an off-by-one position would move them by nats)."""
    shots = "Q: Name a fruit.\nA: Apple\n\nQ: Name an animal.\nA: Horse\n\nQ: "
    prompts = [shots + p + "\nA:" for p in PROMPTS] * 2
    continuations = CONTINUATIONS + [" Berlin", " Green", " The rain stopped."]
    plain = smollm2.logprobs(prompts, continuations, batch_size=6)
    seen = []
    forward = smollm2.model.forward

    def spy(*args, **kwargs):
        seen.append(tuple(kwargs["input_ids"].shape))
        return forward(*args, **kwargs)

    monkeypatch.setattr(smollm2.model, "forward", spy)
    shared = smollm2.logprobs(prompts, continuations, batch_size=6, share_prefix=True)
    n_shared = len(smollm2.tokenizer(shots)["input_ids"])
    assert seen[0][0] == 1 and seen[0][1] >= n_shared - 1  # the prefix, once
    assert seen[1][0] == 6 and seen[1][1] < max(map(len, prompts))  # the rest, all rows
    np.testing.assert_allclose(shared, plain, rtol=0, atol=1e-4)


def test_a_likely_continuation_scores_higher(smollm2):
    scores = smollm2.logprobs(["The capital of France is"] * 2, [" Paris", " Banana"])
    assert scores[0] > scores[1] + 3.0


# ---- completions: the server's token loop -------------------------------------------------------


def test_completions_give_the_greedy_text_of_generate_in_any_batch(smollm2, generations):
    done = smollm2.completions(PROMPTS, MAX_NEW, batch_size=len(PROMPTS))
    assert [c.text for c in done] == generations
    assert [c.text for c in smollm2.completions(PROMPTS, MAX_NEW, batch_size=1)] == generations
    for c in done:
        assert c.finish_reason in ("stop", "length") and "".join(c.tokens) == c.text
        assert len(c.logprobs) == len(c.tokens) and set(c.top_logprobs) == {()}


@pytest.mark.parametrize("chat", [True, False])
def test_completion_logprobs_are_the_models_log_softmax(smollm2, direct_greedy, chat):
    prompt = PROMPTS[0] if chat else "The capital of France is"
    (done,) = smollm2.completions(prompt, 6, chat=chat, top_logprobs=3)
    ids = smollm2._encode([prompt], chat)[0]
    oracle = direct_greedy(smollm2, ids, 6, top=3)
    decode = smollm2._token_text
    assert done.tokens == tuple(decode(token) for token, _, _ in oracle)
    assert "".join(done.tokens) == done.text
    np.testing.assert_allclose(done.logprobs, [v for _, v, _ in oracle], rtol=0, atol=1e-4)
    for ours, (_, _, top) in zip(done.top_logprobs, oracle, strict=True):
        assert [t for t, _ in ours] == [decode(i) for i, _ in top]
        np.testing.assert_allclose([v for _, v in ours], [v for _, v in top], rtol=0, atol=1e-4)
    assert done.total_logprob == pytest.approx(sum(done.logprobs))


def test_completions_stop_before_a_stop_string(smollm2, generations):
    (done,) = smollm2.completions(PROMPTS[0], MAX_NEW, stop=[" is", "zzz"])
    assert generations[0].startswith(done.text + " is") and done.finish_reason == "stop"


def test_seeded_sampling_does_not_depend_on_the_batch(smollm2):
    together = smollm2.completions(PROMPTS, 6, temperature=1.0, random_state=5, batch_size=3)
    alone = smollm2.completions(PROMPTS[::-1], 6, temperature=1.0, random_state=5, batch_size=1)
    assert [c.text for c in together] == [c.text for c in alone][::-1]


# ---- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda m: m.activations(PROMPTS, m.n_layers), "layers"),
        (lambda m: m.activations(PROMPTS, [-1]), "layers"),
        (lambda m: m.activations(PROMPTS, 3, positions="first"), "positions"),
        (lambda m: m.activations([], 3), "prompts"),
        (lambda m: m.steer(np.zeros(m.hidden_size), layer=m.n_layers), "layer"),
        (lambda m: m.steer(np.zeros(m.hidden_size + 1), layer=3), "vector"),
        (lambda m: m.intervene(3, "not callable"), "fn"),
        (lambda m: m.generate([], 4), "prompts"),
        (lambda m: m.generate(PROMPTS, 0), "max_new_tokens"),
        (lambda m: m.generate(PROMPTS, 4, temperature=-1.0), "temperature"),
        (lambda m: m.generate(PROMPTS, 4, temperature=2.5), "temperature"),
        (lambda m: m.generate(PROMPTS, 4, random_state=-1), "random_state"),
        (lambda m: m.generate(PROMPTS, 4, chat="yes"), "chat"),
        (lambda m: m.generate([1, 2], 4), "prompts"),
        (lambda m: m.logprobs(PROMPTS, CONTINUATIONS[:2]), None),
        (lambda m: m.logprobs(PROMPTS[:1], [""]), "continuations"),
        (lambda m: m.completions(PROMPTS, 4, top_logprobs=21), "top_logprobs"),
        (lambda m: m.completions(PROMPTS, 4, stop=[""]), "stop"),
        (lambda m: m.completions(PROMPTS, 0), "max_new_tokens"),
    ],
)
def test_bad_input_raises_naming_the_argument(smollm2, call, argument):
    before = layer_hooks(smollm2)
    with pytest.raises(InputError) as info:
        call(smollm2)
    assert info.value.argument == argument
    if argument is not None:
        assert argument in str(info.value)
    assert layer_hooks(smollm2) == before


# ---- padding and batching helpers ----------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 9), min_size=1, max_size=12),
    batch_size=st.integers(1, 5),
    side=st.sampled_from(["left", "right"]),
)
def test_batches_cover_every_prompt_once_and_padding_keeps_the_tokens(
    smollm2, lengths, batch_size, side
):
    seqs = [list(range(100, 100 + n)) for n in lengths]
    batches = list(local._batches(seqs, batch_size))
    assert sorted(i for b in batches for i in b) == list(range(len(seqs)))
    assert all(1 <= len(b) <= batch_size for b in batches)
    for batch in batches:
        ids, mask = smollm2._pad([seqs[i] for i in batch], side, torch)
        for row, i in enumerate(batch):
            assert ids[row][mask[row].bool()].tolist() == seqs[i]
            real = mask[row].nonzero().flatten().tolist()
            assert real == list(range(real[0], real[0] + len(seqs[i])))  # contiguous
            assert (real[-1] == ids.shape[1] - 1) if side == "left" else (real[0] == 0)


# ---- progress ------------------------------------------------------------------------------------


def test_generation_and_activations_report_progress_per_batch(smollm2, generations):
    seen = []
    texts = smollm2.generate(
        PROMPTS, MAX_NEW, batch_size=2, progress=lambda done, total: seen.append((done, total))
    )
    n = len(PROMPTS)
    assert texts == generations  # reporting changes nothing
    assert seen == [(min(k, n), n) for k in range(2, n + 2, 2)]
    seen.clear()
    smollm2.activations(PROMPTS, 3, batch_size=2, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(min(k, n), n) for k in range(2, n + 2, 2)]
