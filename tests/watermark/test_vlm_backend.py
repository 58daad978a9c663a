"""The transformers vision-language backend, on a tiny LLaVA and a tiny Idefics3 built here (random
weights, a BPE tokenizer trained here): no real VLM weights can be loaded offline, so
these tests check the plumbing against transformers' own calls, not the answers' quality.

Oracles: an answer equals a direct ``generate`` on the processor's inputs (prompt written here by
hand, not by the backend); batched, left-padded answers equal one-at-a-time answers; the Q-Align
readout equals the raw first-step logits of ``generate`` at the level words' tokens.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from cli_helpers import one_line, run_main  # noqa: E402
from trustlab.errors import BackendError, InputError  # noqa: E402
from trustlab.watermark.backends import (  # noqa: E402
    READOUT_PROMPT,
    HFVisionLanguageBackend,
    WatermarkBackend,
    expected_score,
)
from trustlab.watermark.describer import QUESTIONS  # noqa: E402
from trustlab.watermark.vocabulary import LEVELS  # noqa: E402

torch.set_num_threads(1)

CHAT = (
    "{% for m in messages %}{{ m['role'].upper() }}: {% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>{{ '\\n' }}{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{{ '\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)
SPECIAL = ["<unk>", "<pad>", "<s>", "</s>", "<image>"]


def _tokenizer(vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text = [READOUT_PROMPT + " ".join(LEVELS), *QUESTIONS, "USER: ASSISTANT: where watermark"]
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(text * 20, trainer)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>",
        eos_token="</s>",
    )  # fmt: skip


def build_tiny_llava(path, *, chat_template: str | None = CHAT, vocab_size: int = 600) -> None:
    """A 2-layer LLaVA (CLIP 32 x 32 vision tower, Llama text model) saved with its processor."""
    tok = _tokenizer(vocab_size)
    image_processor = transformers.CLIPImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
    )
    processor = transformers.LlavaProcessor(
        image_processor=image_processor, tokenizer=tok, patch_size=8,
        vision_feature_select_strategy="default", image_token="<image>",
        num_additional_image_tokens=1, chat_template=chat_template,
    )  # fmt: skip
    vision = transformers.CLIPVisionConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        image_size=32, patch_size=8, projection_dim=32,
    )  # fmt: skip
    text = transformers.LlamaConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
        pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
    )  # fmt: skip
    config = transformers.LlavaConfig(
        vision_config=vision, text_config=text,
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default", vision_feature_layer=-1,
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.LlavaForConditionalGeneration(config).eval()
    with torch.no_grad():  # wide logit gaps: greedy choices do not hinge on rounding
        model.lm_head.weight.mul_(30.0)
    model.save_pretrained(path)
    processor.save_pretrained(path)


IDEFICS_CHAT = (
    "{% for m in messages %}{{ m['role'] | capitalize }}:{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
    "<end_of_utterance>{{ '\\n' }}{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)


def build_tiny_idefics3(path) -> None:
    """A 2-layer Idefics3 (SmolVLM's architecture; its processor wants one list of images per
    text) saved with its processor."""
    tok = _tokenizer(600)
    extra = ["<fake_token_around_image>", "<global-img>", "<end_of_utterance>"]
    tok.add_special_tokens({"additional_special_tokens": extra})
    image_processor = transformers.Idefics3ImageProcessor(
        size={"longest_edge": 64}, max_image_size={"longest_edge": 32}, do_image_splitting=False
    )
    processor = transformers.Idefics3Processor(
        image_processor=image_processor, tokenizer=tok, image_seq_len=4, chat_template=IDEFICS_CHAT
    )
    config = transformers.Idefics3Config(
        text_config=dict(
            model_type="llama", vocab_size=len(tok), hidden_size=32, intermediate_size=64,
            num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
            max_position_embeddings=512, pad_token_id=tok.pad_token_id,
        ),
        vision_config=dict(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
            image_size=32, patch_size=8,
        ),
        scale_factor=2, image_token_id=tok.convert_tokens_to_ids("<image>"),
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.Idefics3ForConditionalGeneration(config).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(30.0)
    model.save_pretrained(path)
    processor.save_pretrained(path)


#: architecture -> (builder, the prompt written by hand, the images argument of its processor)
ARCHS = {
    "llava": (build_tiny_llava, "USER: <image>\n{q}\nASSISTANT:", lambda im: [im]),
    "idefics3": (
        build_tiny_idefics3,
        "User:<image>{q}<end_of_utterance>\nAssistant:",
        lambda im: [[im]],
    ),
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny_llava")
    build_tiny_llava(path)
    return path


@pytest.fixture(scope="module", params=sorted(ARCHS))
def arch(request, tmp_path_factory):
    """(folder, processor, model, hand-written prompt, images argument) of each architecture."""
    build, template, wrap = ARCHS[request.param]
    path = tmp_path_factory.mktemp(f"tiny_{request.param}")
    build(path)
    processor = transformers.AutoProcessor.from_pretrained(path)
    model = transformers.AutoModelForImageTextToText.from_pretrained(path).eval()
    return path, processor, model, template, wrap


@pytest.fixture(scope="module")
def images():
    rng = np.random.default_rng(5)
    return [rng.integers(0, 256, (48 + 8 * i, 64, 3), dtype=np.uint8) for i in range(5)]


def _generate(arch, image, text, **kwargs):
    _, processor, model, _, wrap = arch
    inputs = processor(images=wrap(image), text=[text], return_tensors="pt")
    with torch.inference_mode():
        out = model.generate(**inputs, do_sample=False, **kwargs)
    return inputs, out


def test_answer_equals_transformers_generate(arch, images):
    path, processor, _, template, _ = arch
    vlm = HFVisionLanguageBackend(path, max_new_tokens=12)
    assert isinstance(vlm, WatermarkBackend)
    assert vlm.prompt("Where?") == template.format(q="Where?")
    for image, question in zip(images[:3], QUESTIONS[:3], strict=True):
        inputs, ids = _generate(arch, image, template.format(q=question), max_new_tokens=12)
        new = ids[0, inputs["input_ids"].shape[1] :]
        got = vlm.answer(image, question)
        assert got == processor.decode(new, skip_special_tokens=True).strip()
        assert got  # the random model does say something


def test_batched_left_padded_answers_equal_single_answers(arch, images):
    vlm = HFVisionLanguageBackend(arch[0], max_new_tokens=10, batch_size=3)
    questions = [QUESTIONS[i] for i in (0, 5, 11, 17, 29)]  # prompts of different lengths
    lengths = {len(vlm.prompt(q)) for q in questions}
    assert len(lengths) > 1
    batched = vlm.answer_batch(images, questions)
    single = [vlm.answer(img, q) for img, q in zip(images, questions, strict=True)]
    assert batched == single


def test_level_readout_equals_the_first_generated_step(arch, images):
    path, processor, _, template, _ = arch
    vlm = HFVisionLanguageBackend(path)
    ids = vlm.level_token_ids()
    assert len(set(ids)) == 5
    for token, word in zip(ids, LEVELS, strict=True):  # each id starts its word
        assert word.startswith(processor.tokenizer.decode([token]).strip())
    text = template.format(q=QUESTIONS[0]) + " " + READOUT_PROMPT.rstrip()  # both end in ":"
    for image in images[:3]:
        _, out = _generate(
            arch, image, text, max_new_tokens=1, output_logits=True, return_dict_in_generate=True
        )
        want = out.logits[0][0, ids].double().numpy()
        got = vlm.level_logits(image)
        assert got.shape == (5,)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert 1.0 <= expected_score(got) <= 5.0
    # the image goes in: another image changes the readout
    assert np.abs(vlm.level_logits(images[0]) - vlm.level_logits(images[1])).max() > 1e-4


def test_prompt_template_for_processors_without_chat_template(tmp_path, images):
    build_tiny_llava(tmp_path, chat_template=None)
    with pytest.raises(InputError, match="prompt_template"):
        HFVisionLanguageBackend(tmp_path).answer(images[0], QUESTIONS[0])
    templated = HFVisionLanguageBackend(
        tmp_path, prompt_template="USER: {image}\n{question}\nASSISTANT:", max_new_tokens=8
    )
    assert templated.prompt("Where?") == "USER: <image>\nWhere?\nASSISTANT:"
    assert templated.answer(images[0], QUESTIONS[0])


def test_level_words_sharing_a_first_token_are_refused(tmp_path, images):
    # a byte-level tokenizer with no merges: every " word" starts with the same space byte
    build_tiny_llava(tmp_path, vocab_size=256 + len(SPECIAL))
    with pytest.raises(BackendError, match="share a first token"):
        HFVisionLanguageBackend(tmp_path).level_logits(images[0])


def test_bad_input_names_the_argument(tmp_path, tiny, images):
    with pytest.raises(InputError, match="model_path"):
        HFVisionLanguageBackend(tmp_path / "nowhere")
    text_only = tmp_path / "text_only"
    config = transformers.LlamaConfig(
        vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2,
    )  # fmt: skip
    transformers.LlamaForCausalLM(config).save_pretrained(text_only)
    with pytest.raises(InputError, match="model_path.*image-text-to-text"):
        HFVisionLanguageBackend(text_only).answer(images[0], "Where?")
    for kwargs, name in [
        ({"dtype": "int8"}, "dtype"),
        ({"device": "tpu"}, "device"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"batch_size": -1}, "batch_size"),
        ({"prompt_template": "{question} only"}, "prompt_template"),
    ]:
        with pytest.raises(InputError, match=name):
            HFVisionLanguageBackend(tiny, **kwargs)
    vlm = HFVisionLanguageBackend(tiny, max_new_tokens=4)
    with pytest.raises(InputError, match="question"):
        vlm.answer(images[0], "  ")
    with pytest.raises(InputError, match="questions"):
        vlm.answer_batch(images[:2], ["Where?"])
    with pytest.raises(InputError, match="image"):
        vlm.level_logits(np.zeros((4, 4), np.uint8))


def test_cli_describe_with_a_vlm(tiny, tmp_path, images, capsys):
    from PIL import Image

    png = tmp_path / "img.png"
    Image.fromarray(images[0]).save(png)
    code, out, _ = run_main(
        ["watermark", "describe", png, "--vlm", tiny, "--max-new-tokens", "8", "--json"], capsys
    )
    assert code == 0
    payload = json.loads(out)
    vlm = HFVisionLanguageBackend(tiny, max_new_tokens=8)
    assert payload["description"] == vlm.answer(images[0], QUESTIONS[0])
    assert payload["expected_score"] == pytest.approx(
        expected_score(vlm.level_logits(images[0])), abs=1e-9
    )
    assert payload["model"] == f"vlm {tiny}"
    code, _, err = run_main(["watermark", "describe", png, "--vlm", tmp_path], capsys)
    assert code == 2 and "error: --vlm: expected a folder" in one_line(err)
    code, _, err = run_main(
        ["watermark", "describe", png, "--vlm", tiny, "--prompt-template", "x"], capsys
    )
    assert code == 2 and "--prompt-template" in one_line(err)


# ---------------------------------------------------------------------------- evaluate_backend
@pytest.fixture(scope="module")
def small_set():
    from trustlab.watermark.synth import synthesize

    return synthesize(10, random_state=41)


def test_evaluate_backend_equals_the_metrics_computed_by_hand(small_set):
    from trustlab.watermark.backends import TemplateBackend
    from trustlab.watermark.checkpoints import load_checkpoint
    from trustlab.watermark.evaluation import (
        VISIBLE,
        evaluate_backend,
        reference_paragraphs,
        visibility_numbers,
    )
    from trustlab.watermark.metrics import score_descriptions

    ds = small_set
    backend = TemplateBackend(load_checkpoint(), random_state=2)
    calls = []
    ev = evaluate_backend(backend, ds, random_state=7, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (len(ds), len(ds))
    answers = [backend.answer(img, QUESTIONS[0]) for img in ds.images]
    assert list(ev.answers) == answers
    refs = reference_paragraphs(ds, random_state=7)
    assert refs[0].endswith(f"The watermark visibility is: {ds.levels[0]}.")
    want = score_descriptions(refs, answers, reference_levels=list(ds.levels))
    assert ev.descriptions.bleu1_mean == want.bleu1_mean
    assert ev.descriptions.rouge_l_mean == want.rouge_l_mean
    assert ev.descriptions.accuracy_exact == want.accuracy_exact
    # the template's readout is the predictor's level distribution: its expected score
    expected = np.array([backend.predict([img]).expected_scores[0] for img in ds.images])
    np.testing.assert_allclose(ev.expected_scores, expected, rtol=1e-12)
    visible = np.isin(np.asarray(ds.kinds), VISIBLE)
    want_readout = visibility_numbers(expected[visible], np.asarray(ds.scores)[visible])
    assert ev.readout == pytest.approx(want_readout, rel=1e-9)
    assert "BLEU-1" in ev.summary() and ev.to_dict()["descriptions"]["n"] == len(ds)
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ev.plot()


def test_evaluate_backend_bad_input(small_set):
    from trustlab.watermark.evaluation import evaluate_backend

    with pytest.raises(InputError, match="backend"):
        evaluate_backend(object(), small_set)
    with pytest.raises(InputError, match="question"):
        evaluate_backend(_Echo(), small_set, question=" ")


class _Echo:
    def answer(self, image, question):
        return "The watermark visibility is: invisible."

    def level_logits(self, image):
        return np.zeros(5)


def test_cli_evaluate_with_a_vlm(tiny, tmp_path, capsys):
    from trustlab.watermark.evaluation import reference_paragraphs
    from trustlab.watermark.metrics import score_descriptions
    from trustlab.watermark.synth import synthesize

    out = tmp_path / "ev"
    ds = synthesize(6, random_state=3)
    ds.save(tmp_path / "data")
    args = ["watermark", "evaluate", "--vlm", tiny, "--data", tmp_path / "data", "--seed", "3",
            "--out", out]  # fmt: skip
    code, stdout, _ = run_main([*args, "--json"], capsys)
    assert code == 0
    payload = json.loads(stdout)["backend"]
    vlm = HFVisionLanguageBackend(tiny)
    answers = vlm.answer_batch(list(ds.images), [QUESTIONS[0]] * len(ds))
    want = score_descriptions(
        reference_paragraphs(ds, random_state=3), answers, reference_levels=list(ds.levels)
    )
    assert payload["descriptions"]["bleu1_mean"] == pytest.approx(want.bleu1_mean, abs=1e-12)
    assert payload["backend"] == "HFVisionLanguageBackend"
    assert (out / "evaluation.json").is_file() and (out / "watermark_backend.png").is_file()
    code, _, err = run_main([*args[:-2], "--out", tmp_path / "ev2", "--model", tiny], capsys)
    assert code == 2 and "--vlm" in one_line(err)
