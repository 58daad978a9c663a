"""WMarkGPTBackend against a stand-in for the authors' package (``wmarkgpt_standin/llm``: their
interface, a tiny random model, none of their code): WMarkGPT's weights and code cannot be
installed here, so these tests check the plumbing, not the answers' quality.

Oracles: an answer equals the authors' procedure done by hand (their template's prompt, their
image-token tokenisation, ``generate`` with their sampling settings under the answer's seed); the
readout equals the model's next-token logits at the level words' tokens, for our readout and for
theirs (``compat``); a folder that lacks weights is refused where the authors' loader would keep
random ones.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from cli_helpers import one_line, run_main  # noqa: E402
from trustlab.errors import BackendError, InputError  # noqa: E402
from trustlab.watermark import WatermarkBackend, expected_score  # noqa: E402
from trustlab.watermark.backends import READOUT_PROMPT  # noqa: E402
from trustlab.watermark.describer import QUESTIONS  # noqa: E402
from trustlab.watermark.vocabulary import LEVELS  # noqa: E402
from trustlab.watermark.wmarkgpt import WMarkGPTBackend  # noqa: E402

torch.set_num_threads(1)

STANDIN = Path(__file__).parent / "wmarkgpt_standin"
SPECIAL = ["<unk>", "<pad>", "<s>", "</s>"]


def _tokenizer():
    """A byte-level BPE tokenizer that puts BOS first, as LLaMA's does."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text = [READOUT_PROMPT + " ".join(LEVELS), *QUESTIONS, "USER: ASSISTANT: where watermark"]
    trainer = trainers.BpeTrainer(
        vocab_size=500, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(text * 20, trainer)
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", bos)]
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>",
        eos_token="</s>",
    )  # fmt: skip


@pytest.fixture(scope="module")
def standin():
    """The stand-in package importable as ``llm`` for this module's tests, then forgotten."""
    sys.path.insert(0, str(STANDIN))
    yield STANDIN
    sys.path.remove(str(STANDIN))
    for name in [m for m in sys.modules if m == "llm" or m.startswith("llm.")]:
        del sys.modules[name]


def _save(model, tok, path: Path, *, drop: str | None = None, legacy: bool = False) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(path)
    tok.save_pretrained(path)
    transformers.CLIPImageProcessor(
        size={"shortest_edge": 16}, crop_size={"height": 16, "width": 16}
    ).save_pretrained(path)
    state = {k: v for k, v in model.state_dict().items() if k != drop}
    torch.save(state, path / "pytorch_model.bin", _use_new_zipfile_serialization=not legacy)
    return path


@pytest.fixture(scope="module")
def folder(standin, tmp_path_factory):
    from llm.model.modeling_wmark_gpt import MPLUGOwl2Config, MPLUGOwl2LlamaForCausalLM

    tok = _tokenizer()
    config = MPLUGOwl2Config(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
        pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
    )  # fmt: skip
    torch.manual_seed(0)
    model = MPLUGOwl2LlamaForCausalLM(config).eval()
    root = tmp_path_factory.mktemp("wmarkgpt")
    return {
        "ok": _save(model, tok, root / "ok"),
        "missing": _save(model, tok, root / "missing", drop="vision.weight"),
        # torch's legacy file format, which cannot be memory-mapped
        "legacy_missing": _save(model, tok, root / "lm", drop="vision.weight", legacy=True),
        "legacy": _save(model, tok, root / "legacy", legacy=True),
    }


@pytest.fixture(scope="module")
def backend(folder):
    return WMarkGPTBackend(folder["ok"], code_path=STANDIN, max_new_tokens=12)


def _image(seed: int, h: int = 24, w: int = 32) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def _by_hand(backend, image, text):
    """The authors' inputs for ``text`` and ``image``, built here without the backend."""
    from llm.constants import IMAGE_TOKEN_INDEX
    from llm.mm_utils import tokenizer_image_token

    parts = backend._load()
    tok, processor = parts["tokenizer"], parts["processor"]
    ids = tokenizer_image_token(text, tok, IMAGE_TOKEN_INDEX, return_tensors="pt")[None]
    h, w = image.shape[:2]
    side = max(h, w)
    square = np.tile(
        np.array([int(255 * m) for m in processor.image_mean], np.uint8), (side, side, 1)
    )
    square[(side - h) // 2 : (side - h) // 2 + h, (side - w) // 2 : (side - w) // 2 + w] = image
    pixels = processor(images=square, return_tensors="pt")["pixel_values"]
    return ids, pixels, tok, parts["model"]


def test_the_prompt_is_the_authors_template(backend):
    q = QUESTIONS[3]
    assert backend.prompt(q) == f"USER: {q}\n<|image|> ASSISTANT:"
    assert isinstance(backend, WatermarkBackend)


def test_a_sampled_answer_equals_the_authors_procedure(backend):
    img, q = _image(1), QUESTIONS[0]
    ids, pixels, tok, model = _by_hand(backend, img, f"USER: {q}\n<|image|> ASSISTANT:")
    torch.manual_seed(backend.seed_of(img, q))
    with torch.inference_mode():
        out = model.generate(ids, images=pixels, do_sample=True, temperature=0.7,
                             max_new_tokens=12, use_cache=True)  # fmt: skip
    expected = tok.decode(out[0, ids.shape[1] :], skip_special_tokens=True).strip()
    rng_before = torch.get_rng_state()
    answer = backend.answer(img, q)
    assert answer == expected and answer
    assert torch.equal(torch.get_rng_state(), rng_before)  # the caller's generator is untouched
    assert backend.answer_batch([img, img], [q, q]) == [answer, answer]  # seeded: repeatable
    # the seed follows random_state, the image and the question
    other = WMarkGPTBackend(backend.model_path, code_path=STANDIN, random_state=1)
    assert other.seed_of(img, q) != backend.seed_of(img, q)
    assert backend.seed_of(_image(2), q) != backend.seed_of(img, q)


def test_a_sampled_answer_reseeds_no_gpu_stream(backend, monkeypatch):
    # Review 58: torch.manual_seed inside fork_rng(devices=[]) for a model on the CPU also
    # reseeded every GPU's stream (torch.cuda.manual_seed_all), which was not forked.
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        pytest.skip("CUDA is in use: its streams are forked and seeded")
    seeded = []
    monkeypatch.setattr(torch.cuda, "manual_seed_all", seeded.append)
    assert backend.answer(_image(3), QUESTIONS[1])
    assert seeded == []


def test_temperature_zero_decodes_greedily(folder):
    greedy = WMarkGPTBackend(folder["ok"], code_path=STANDIN, max_new_tokens=10, temperature=0)
    img, q = _image(3), QUESTIONS[1]
    ids, pixels, tok, model = _by_hand(greedy, img, greedy.prompt(q))
    with torch.inference_mode():
        out = model.generate(ids, images=pixels, do_sample=False, max_new_tokens=10)
    assert (
        greedy.answer(img, q)
        == tok.decode(out[0, ids.shape[1] :], skip_special_tokens=True).strip()
    )


def _readout_by_hand(backend, img, text, ids):
    tokens, pixels, _, model = _by_hand(backend, img, text)
    with torch.inference_mode():
        logits = model(tokens, images=pixels)["logits"][0, -1]
    return logits[ids].double().numpy(), tokens


def test_the_readout_reads_the_level_words_after_the_prompt(backend, folder):
    img = _image(4)
    tok = backend._load()["tokenizer"]
    stem = READOUT_PROMPT.rstrip()
    base = tok(stem, add_special_tokens=False)["input_ids"]
    ids = [tok(f"{stem} {w}", add_special_tokens=False)["input_ids"][len(base)] for w in LEVELS]
    text = f"USER: {QUESTIONS[0]}\n<|image|> ASSISTANT: {stem}"
    expected, _ = _readout_by_hand(backend, img, text, ids)
    got = backend.level_logits(img)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert 1.0 <= expected_score(got) <= 5.0
    assert not np.allclose(backend.level_logits(_image(5)), got)

    # the authors' readout: a trailing space, and each word's second id when tokenised alone
    compat = WMarkGPTBackend(folder["ok"], code_path=STANDIN, compat=True)
    theirs = [tok(w)["input_ids"][1] for w in LEVELS]
    assert compat.level_token_ids() == theirs != ids
    expected_compat, tokens = _readout_by_hand(compat, img, text + " ", theirs)
    np.testing.assert_allclose(compat.level_logits(img), expected_compat, rtol=0, atol=1e-6)
    # the trailing space is a token of its own: the logits are read one token late
    assert tok.decode(tokens[0, -1:]) == " "


def test_weights_missing_from_the_files_are_refused(folder, tmp_path):
    for name in ("missing", "legacy_missing"):
        with pytest.raises(BackendError, match=r"1 of the model's \d+ weights .*vision.weight"):
            WMarkGPTBackend(folder[name], code_path=STANDIN).level_logits(_image(6))
    full = WMarkGPTBackend(folder["ok"], code_path=STANDIN).level_logits(_image(6))
    legacy = WMarkGPTBackend(folder["legacy"], code_path=STANDIN).level_logits(_image(6))
    np.testing.assert_array_equal(legacy, full)
    safetensors_only = tmp_path / "st"
    safetensors_only.mkdir()
    (safetensors_only / "config.json").write_text((folder["ok"] / "config.json").read_text())
    (safetensors_only / "model.safetensors").write_bytes(b"")
    with pytest.raises(InputError, match="pytorch_model"):
        WMarkGPTBackend(safetensors_only, code_path=STANDIN)


def test_bad_arguments_and_missing_code(folder, tmp_path, monkeypatch):
    with pytest.raises(InputError, match="model_path"):
        WMarkGPTBackend(tmp_path)
    with pytest.raises(InputError, match="code_path"):
        WMarkGPTBackend(folder["ok"], code_path=tmp_path)
    with pytest.raises(InputError, match="temperature"):
        WMarkGPTBackend(folder["ok"], temperature=-1)
    with pytest.raises(InputError, match="compat"):
        WMarkGPTBackend(folder["ok"], compat="yes")
    with pytest.raises(InputError, match="device"):
        WMarkGPTBackend(folder["ok"], device="tpu")
    # without code_path and without the package on the path: a clear error naming the repository
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(STANDIN)])
    for name in [m for m in sys.modules if m == "llm" or m.startswith("llm.")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(BackendError, match="TanSongBai/WMarkGPT"):
        WMarkGPTBackend(folder["ok"]).prompt("Where is the watermark?")


def test_cli_describe_with_the_authors_code(folder, backend, tmp_path, capsys):
    from PIL import Image

    img = _image(7, 32, 32)
    path = tmp_path / "img.png"
    Image.fromarray(img).save(path)
    code, out, _ = run_main(
        ["watermark", "describe", str(path), "--vlm", str(folder["ok"]), "--wmarkgpt-code",
         str(STANDIN), "--max-new-tokens", "12", "--json"], capsys
    )  # fmt: skip
    assert code == 0
    payload = json.loads(out)
    assert payload["description"] == backend.answer(img, QUESTIONS[0])
    assert payload["expected_score"] == pytest.approx(expected_score(backend.level_logits(img)))
    assert payload["model"] == f"wmarkgpt {folder['ok']}"
    code, _, err = run_main(
        ["watermark", "describe", str(path), "--vlm", str(folder["ok"]), "--wmarkgpt-code",
         str(tmp_path)], capsys
    )  # fmt: skip
    assert code == 2 and "--wmarkgpt-code" in one_line(err)
