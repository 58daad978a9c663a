"""Backends that answer WMarkGPT's questions about a watermarked image.

A backend has two methods (:class:`WatermarkBackend`):

- ``answer(image, question) -> str``: one paragraph ending with "The watermark visibility is: L.";
- ``level_logits(image) -> (5,) array``: scores of the five level words, in
  :data:`~trustlab.watermark.vocabulary.LEVELS` order, whose softmax gives WMarkGPT's Q-Align-style
  expected score (``sum softmax x [5, 4, 3, 2, 1]``):

  >>> import numpy as np
  >>> round(expected_score(np.log([0.7, 0.1, 0.1, 0.05, 0.05])), 6)
  4.35

:class:`TemplateBackend` (the default, CPU) is the no-reference predictor followed by the
deterministic describer: it only says what the predictor estimated. Any other model that
implements the two methods plugs in (a vision-language model reads ``level_logits`` as the
next-token logits of the five level words after :data:`READOUT_PROMPT`).
:class:`HFVisionLanguageBackend` is such a model: any ``transformers`` image-text-to-text model
(Qwen2-VL, LLaVA, Idefics, ...) from a local folder of weights, on a GPU when there is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from trustlab._checks import check_device, check_positive_int
from trustlab._lazy import require
from trustlab.errors import BackendError, InputError
from trustlab.watermark.metrics import expected_score
from trustlab.watermark.vocabulary import LEVELS

__all__ = [
    "WatermarkBackend",
    "TemplateBackend",
    "HFVisionLanguageBackend",
    "READOUT_PROMPT",
    "expected_score",
]

_DTYPES = ("auto", "float32", "bfloat16", "float16")

#: What WMarkGPT appends to the question before reading the level words' logits.
READOUT_PROMPT = "The watermark visibility is: "


@runtime_checkable
class WatermarkBackend(Protocol):
    """What trustlab needs from a model that looks at watermarked images."""

    def answer(self, image: np.ndarray, question: str) -> str: ...

    def level_logits(self, image: np.ndarray) -> np.ndarray: ...


class TemplateBackend:
    """The no-reference predictor and the deterministic describer, as a backend.

    ``predictor``: a fitted :class:`~trustlab.watermark.nr.WatermarkPredictor` (the shipped model
    when None). Each answer's template choice is seeded from ``random_state`` and the question, so
    the same question on the same image gets the same paragraph.
    """

    def __init__(self, predictor: Any = None, *, random_state: int = 0) -> None:
        self.predictor = predictor
        self.random_state = random_state

    def _model(self) -> Any:
        if self.predictor is None:
            from trustlab.watermark.checkpoints import load_checkpoint

            self.predictor = load_checkpoint()
        return self.predictor

    def predict(self, images: Any) -> Any:
        """The predictor's :class:`~trustlab.watermark.nr.WatermarkPredictions` of ``images``."""
        return self._model().predict(images)

    def answer(self, image: np.ndarray, question: str) -> str:
        return self.answer_batch([check_one_image(image)], [question])[0]

    def answer_batch(self, images: Sequence[np.ndarray], questions: Sequence[str]) -> list[str]:
        """Answers for many images at once (one batched predictor pass)."""
        imgs, questions = check_images_and_questions(images, questions)
        return self.describe_predictions(self.predict(imgs), questions)

    def describe_predictions(self, predictions: Any, questions: Sequence[str]) -> list[str]:
        """The answers to ``questions`` (one per image) about predictions already made: what
        :meth:`answer_batch` writes for the images ``predictions`` were made of."""
        from trustlab.watermark.describer import describe

        if len(questions) != len(predictions):
            raise InputError.bad(
                "questions", f"{len(predictions)} questions, one per prediction", len(questions)
            )
        seeds = [_seed(self.random_state, q) for q in questions]
        return [
            describe(predictions.facts(i), random_state=s, faint_region=predictions.faint_region(i))
            for i, s in enumerate(seeds)
        ]

    def level_logits(self, image: np.ndarray) -> np.ndarray:
        pred = self.predict([check_one_image(image)])
        return np.log(np.clip(pred.level_probabilities[0], 1e-300, None))


class HFVisionLanguageBackend:
    """A ``transformers`` image-text-to-text model from a local folder, as a backend.

    Parameters
    ----------
    model_path : str or Path
        A folder written by ``save_pretrained`` (``config.json``, the weights, the processor's
        files): Qwen2-VL, LLaVA, Idefics3, SmolVLM, ... or a fine-tuned WMarkGPT-like model in
        one of these architectures. Nothing is downloaded.
    device : str
        ``"auto"`` (CUDA when torch sees a GPU, else the CPU), ``"cpu"``, ``"cuda"``, ``"cuda:1"``...
    dtype : str
        ``"auto"`` (bfloat16 on a GPU, float32 on the CPU), ``"float32"``, ``"bfloat16"`` or
        ``"float16"``.
    max_new_tokens : int
        Length limit of an answer (greedy decoding).
    batch_size : int
        Images per ``generate`` call in :meth:`answer_batch` (left-padded).
    prompt_template : str or None
        For processors without a chat template: the text before the answer, with ``{image}``
        where the image goes and ``{question}`` (e.g. ``"USER: {image}\\n{question} ASSISTANT:"``).
        None uses the processor's chat template (one user turn: the image, then the question).

    The model loads on first use. :meth:`level_logits` is WMarkGPT's Q-Align readout: the prompt
    of the first of WMarkGPT's questions, followed (after a space, unless the prompt ends with
    one) by :data:`READOUT_PROMPT`, and the next-token logits of the first token of each level
    word (which must differ between the five words).

    Examples
    --------
    >>> vlm = HFVisionLanguageBackend("~/models/Qwen2-VL-2B-Instruct")  # doctest: +SKIP
    >>> vlm.answer(image, QUESTIONS[0])  # doctest: +SKIP
    >>> expected_score(vlm.level_logits(image))  # doctest: +SKIP
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: int = 256,
        batch_size: int = 4,
        prompt_template: str | None = None,
    ) -> None:
        path = Path(model_path).expanduser()
        if not (path / "config.json").is_file():
            raise InputError.bad(
                "model_path", "a folder with a transformers model (config.json)", str(model_path)
            )
        check_device_and_dtype(device, dtype)
        if prompt_template is not None and (
            not isinstance(prompt_template, str)
            or "{question}" not in prompt_template
            or "{image}" not in prompt_template
        ):
            raise InputError.bad(
                "prompt_template", "a string with {image} and {question} in it", prompt_template
            )
        self.model_path = path
        self.device = device
        self.dtype = dtype
        self.max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens")
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.prompt_template = prompt_template
        self._loaded: tuple[Any, Any, Any] | None = None
        self._level_ids: list[int] | None = None

    # ---- loading ---------------------------------------------------------------------------
    def _load(self) -> tuple[Any, Any, Any]:
        if self._loaded is None:
            torch = require("torch", "llm")
            transformers = require("transformers", "llm")
            device, dtype = resolve_device_and_dtype(
                torch, self.device, self.dtype, gpu_dtype="bfloat16"
            )
            bars = transformers.utils.logging.is_progress_bar_enabled()
            transformers.utils.logging.disable_progress_bar()  # no "Loading weights" on stderr
            try:
                processor = transformers.AutoProcessor.from_pretrained(self.model_path)
                model = transformers.AutoModelForImageTextToText.from_pretrained(
                    self.model_path, dtype=getattr(torch, dtype)
                )
            except (ValueError, KeyError, OSError) as exc:
                raise InputError.bad(
                    "model_path",
                    "a local image-text-to-text model that transformers can load (Qwen2-VL, "
                    f"LLaVA, Idefics3, ...); loading failed with {type(exc).__name__}: "
                    f"{str(exc).splitlines()[0] if str(exc) else ''}",
                    str(self.model_path),
                ) from exc
            finally:
                if bars:
                    transformers.utils.logging.enable_progress_bar()
            tokenizer = getattr(processor, "tokenizer", None)
            if tokenizer is None:
                raise InputError.bad(
                    "model_path", "a model whose processor has a tokenizer", str(self.model_path)
                )
            if self.prompt_template is None and not getattr(processor, "chat_template", None):
                raise InputError.bad(
                    "prompt_template",
                    "a template with {image} and {question} (this processor has no chat template)",
                    None,
                )
            tokenizer.padding_side = "left"  # generation continues the last prompt token
            if tokenizer.pad_token is None:
                tokenizer.pad_token = tokenizer.eos_token
            self._loaded = (processor, model.to(device).eval(), torch)
        return self._loaded

    def prompt(self, question: str) -> str:
        """The text the model sees before its answer (the image's placeholder included)."""
        if not isinstance(question, str) or not question.strip():
            raise InputError.bad("question", "a non-empty string", question)
        processor, _, _ = self._load()
        if self.prompt_template is not None:
            token = getattr(processor, "image_token", None) or "<image>"
            return self.prompt_template.replace("{image}", token).replace("{question}", question)
        messages = [
            {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": question}]}
        ]
        return processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def _inputs(self, images: Sequence[np.ndarray], texts: Sequence[str]) -> Any:
        processor, model, _ = self._load()
        batch = processor(
            images=[[img] for img in images], text=list(texts), return_tensors="pt", padding=True
        )
        return batch.to(model.device)

    # ---- the protocol ----------------------------------------------------------------------
    def answer(self, image: np.ndarray, question: str) -> str:
        return self.answer_batch([check_one_image(image)], [question])[0]

    def answer_batch(self, images: Sequence[np.ndarray], questions: Sequence[str]) -> list[str]:
        """Greedy answers, ``batch_size`` images per ``generate`` call (special tokens removed)."""
        imgs, questions = check_images_and_questions(images, questions)
        prompts = [self.prompt(q) for q in questions]
        processor, model, torch = self._load()
        out: list[str] = []
        for s in range(0, len(imgs), self.batch_size):
            inputs = self._inputs(imgs[s : s + self.batch_size], prompts[s : s + self.batch_size])
            with torch.inference_mode():
                ids = model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
            new = ids[:, inputs["input_ids"].shape[1] :]
            out.extend(t.strip() for t in processor.batch_decode(new, skip_special_tokens=True))
        return out

    def level_token_ids(self) -> list[int]:
        """The first token of each level word after :data:`READOUT_PROMPT` (LEVELS order)."""
        if self._level_ids is None:
            processor, _, _ = self._load()
            self._level_ids = level_word_ids(processor.tokenizer, self.model_path)
        return self._level_ids

    def level_logits(self, image: np.ndarray) -> np.ndarray:
        """Next-token logits of the five level words after the readout prompt."""
        from trustlab.watermark.describer import QUESTIONS

        img = [check_one_image(image)]
        ids = self.level_token_ids()
        prompt = self.prompt(QUESTIONS[0])
        # the answer starts after the prompt as the model would write it: "ASSISTANT: The ..."
        text = prompt + ("" if prompt[-1:].isspace() else " ") + READOUT_PROMPT.rstrip()
        _, model, torch = self._load()
        inputs = self._inputs(img, [text])
        with torch.inference_mode():
            logits = model(**inputs).logits[0, -1]
        return logits[ids].float().cpu().numpy().astype(np.float64)


def check_device_and_dtype(device: Any, dtype: Any) -> None:
    """A backend's ``device`` ("auto", "cpu", "cuda", "cuda:N") and ``dtype`` (one of
    ``"auto"``, ``"float32"``, ``"bfloat16"``, ``"float16"``)."""
    check_device(device)
    if dtype not in _DTYPES:
        raise InputError.bad("dtype", f"one of {sorted(_DTYPES)}", dtype)


def resolve_device_and_dtype(torch: Any, device: str, dtype: str, *, gpu_dtype: str) -> tuple:
    """``"auto"`` resolved: CUDA when torch sees a GPU, else the CPU; float32 on the CPU and
    ``gpu_dtype`` on a GPU."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if dtype == "auto":
        dtype = "float32" if device == "cpu" else gpu_dtype
    return device, dtype


def check_images_and_questions(
    images: Sequence[np.ndarray], questions: Sequence[str]
) -> tuple[list[np.ndarray], list[str]]:
    """The images of ``answer_batch`` as (H, W, 3) uint8 arrays and their questions, one per
    image, each a non-empty string."""
    from trustlab.watermark.nr import as_images

    imgs = as_images(list(images), "images")
    qs = list(questions)
    if len(imgs) != len(qs):
        raise InputError.bad("questions", f"{len(imgs)} questions, one per image", len(qs))
    for q in qs:
        if not isinstance(q, str) or not q.strip():
            raise InputError.bad("question", "a non-empty string", q)
    return imgs, qs


def check_one_image(image: Any) -> np.ndarray:
    """One (H, W, 3) uint8 image (for ``answer`` and ``level_logits``; an (1, H, W, 3) array
    too), named ``image`` in the errors."""
    from trustlab.watermark.nr import as_image

    try:
        arr = np.asarray(image)
    except ValueError:  # a sequence of images of several sizes
        raise InputError.bad("image", "one (H, W, 3) uint8 image", f"{len(image)} images") from None
    if arr.ndim == 4 and len(arr) != 1:
        raise InputError.bad("image", "one (H, W, 3) uint8 image", f"{len(arr)} images")
    return as_image(arr[0] if arr.ndim == 4 else arr, "image")


def level_word_ids(tokenizer: Any, where: Any) -> list[int]:
    """The first token of each level word where it follows :data:`READOUT_PROMPT` (without its
    trailing space, the word after one space), in :data:`~trustlab.watermark.vocabulary.LEVELS`
    order. ``where`` names the model in the errors: a tokenizer that merges the prompt's end
    with a word, or in which two words share a first token, cannot be read this way."""
    stem = READOUT_PROMPT.rstrip()
    base = tokenizer(stem, add_special_tokens=False)["input_ids"]
    ids = []
    for word in LEVELS:
        full = tokenizer(f"{stem} {word}", add_special_tokens=False)["input_ids"]
        if full[: len(base)] != base or len(full) <= len(base):
            raise BackendError(
                f"the tokenizer of {where} merges {stem!r} with the level word {word!r}; the "
                "Q-Align readout needs them apart"
            )
        ids.append(int(full[len(base)]))
    if len(set(ids)) != len(ids):
        raise BackendError(
            f"the level words {LEVELS} share a first token in the tokenizer of {where}; their "
            "logits cannot be read apart"
        )
    return ids


def _seed(random_state: int, question: str) -> int:
    import hashlib

    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)):
        raise InputError.bad("random_state", "an int seed", random_state)
    digest = hashlib.sha256(f"{int(random_state)}|{question}".encode()).digest()
    return int.from_bytes(digest[:4], "little")
