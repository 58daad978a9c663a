"""WMarkGPT itself as a backend: the authors' mPLUG-Owl2 code and weights, installed by the user.

WMarkGPT's model class (``MPLUGOwl2LlamaForCausalLM``: a CLIP ViT, a visual abstractor and
LLaMA-2 with modality-adaptive modules) is not in ``transformers``; it lives in the authors'
repository (https://github.com/TanSongBai/WMarkGPT, package ``llm``), which trustlab does not ship
or copy. :class:`WMarkGPTBackend` imports it from the user's clone (``code_path``) and runs it as
their evaluation scripts do, through their own conversation template (``"mplug_owl2"``), their
image-token tokenisation and their model's ``generate``:

- ``answer(image, question)``: the question, a newline and the image token as the user turn;
  their sampling (temperature 0.7, up to 512 new tokens), stopped at the template's ``</s>``;
  seeded per image and question, so a run can be repeated (temperature 0 decodes greedily);
- ``level_logits(image)``: WMarkGPT's Q-Align readout, the next-token logits of the five level
  words after "The watermark visibility is:".

Two things differ from the authors' scripts, each with ``compat=True`` to reproduce theirs:

- **The readout.** Their prompt ends with "is: " (a trailing space) and reads each level word's
  token from the word tokenised on its own. In a sentencepiece (LLaMA) or byte-level tokenizer
  the trailing space is a token of its own, which the model never saw before a level word in
  its training answers ("... is: faint."): the logits are read one token late. By default the
  prompt ends at "is:" and the words are tokenised after it, as they appear in an answer
  (:func:`~trustlab.watermark.backends.level_word_ids`). The readout question is the first of
  WMarkGPT's questions; theirs picks one at random, unseeded, for every image.
- **Missing weights.** Their model loads ``pytorch_model*.bin`` with ``strict=False``, so a
  weight that is not in the files (or a folder of ``.safetensors`` only) silently stays at its
  random initial value. The backend checks that every weight of the model is in the files and
  refuses the folder otherwise.

Images are padded to a square with the image processor's mean colour before its preprocessing
(their ``expand2square``; their demo script stretches instead), and the answer is decoded
without special tokens (their scripts keep ``</s>``, which their metrics then strip).

Nothing here can be run on this project's machines (no weights, no GPU); the tests drive the
backend with a stand-in for the authors' package that has the same interface (see
``tests/watermark/test_wmarkgpt_backend.py``).
"""

from __future__ import annotations

import hashlib
import importlib
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_bool, check_non_negative, check_positive_int
from trustlab._lazy import require
from trustlab._numerics import seeded_torch
from trustlab.errors import BackendError, InputError
from trustlab.watermark.backends import (
    READOUT_PROMPT,
    check_device_and_dtype,
    check_images_and_questions,
    check_one_image,
    level_word_ids,
    resolve_device_and_dtype,
)
from trustlab.watermark.vocabulary import LEVELS

__all__ = ["WMarkGPTBackend", "WMARKGPT_PACKAGE", "CONVERSATION_TEMPLATE"]

#: The authors' package (a folder of their repository).
WMARKGPT_PACKAGE = "llm"
#: Their conversation template.
CONVERSATION_TEMPLATE = "mplug_owl2"
_MODULES = {
    "modeling": "llm.model.modeling_wmark_gpt",
    "conversation": "llm.conversation",
    "mm_utils": "llm.mm_utils",
    "constants": "llm.constants",
}


class WMarkGPTBackend:
    """WMarkGPT (the authors' code and weights) as a :class:`~trustlab.watermark.backends.
    WatermarkBackend`.

    Parameters
    ----------
    model_path : str or Path
        A folder of WMarkGPT weights as the authors release them: ``config.json``, the
        tokenizer's and the CLIP image processor's files and ``pytorch_model*.bin``.
    code_path : str or Path or None
        A clone of the authors' repository (the folder holding ``llm/``); None when their package
        is importable already.
    device : str
        ``"auto"`` (CUDA when torch sees a GPU, else the CPU), ``"cpu"``, ``"cuda"``, ``"cuda:N"``.
    dtype : str
        ``"auto"`` (float16 on a GPU, as the authors run it; float32 on the CPU), ``"float32"``,
        ``"bfloat16"`` or ``"float16"``.
    max_new_tokens : int
        Length limit of an answer (the authors': 512).
    temperature : float
        Sampling temperature of the answers (the authors': 0.7); 0 decodes greedily.
    random_state : int
        Seed of the sampling; each answer's seed also depends on the image and the question.
    compat : bool
        Read the levels as the authors' script does (trailing space, words tokenised alone).

    Examples
    --------
    >>> wm = WMarkGPTBackend("~/ckpt/WMarkGPT-Synthetic", code_path="~/src/WMarkGPT")  # doctest: +SKIP
    >>> wm.answer(image, QUESTIONS[0])  # doctest: +SKIP
    >>> expected_score(wm.level_logits(image))  # doctest: +SKIP
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        code_path: str | Path | None = None,
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: int = 512,
        temperature: float = 0.7,
        random_state: int = 0,
        compat: bool = False,
    ) -> None:
        path = Path(model_path).expanduser()
        if not (path / "config.json").is_file():
            raise InputError.bad(
                "model_path", "a folder of WMarkGPT weights (config.json)", str(model_path)
            )
        if not sorted(path.glob("pytorch_model*.bin")):
            raise InputError.bad(
                "model_path",
                "a folder with pytorch_model*.bin weights (the only files the authors' loader "
                "reads; without them their model keeps random weights)",
                str(model_path),
            )
        code = None
        if code_path is not None:
            code = Path(code_path).expanduser()
            if not (code / WMARKGPT_PACKAGE).is_dir():
                raise InputError.bad(
                    "code_path",
                    f"a clone of the WMarkGPT repository (a folder holding {WMARKGPT_PACKAGE}/)",
                    str(code_path),
                )
        check_device_and_dtype(device, dtype)
        if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)):
            raise InputError.bad("random_state", "an int seed", random_state)
        self.model_path = path
        self.code_path = code
        self.device = device
        self.dtype = dtype
        self.max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens")
        self.temperature = check_non_negative(temperature, "temperature")
        self.random_state = int(random_state)
        self.compat = check_bool(compat, "compat")
        self._modules: dict[str, Any] | None = None
        self._loaded: dict[str, Any] | None = None
        self._level_ids: list[int] | None = None

    # ---- loading ---------------------------------------------------------------------------
    def _code(self) -> dict[str, Any]:
        """The authors' modules (imported once)."""
        if self._modules is not None:
            return self._modules
        if self.code_path is not None and str(self.code_path) not in sys.path:
            sys.path.insert(0, str(self.code_path))
        modules = {}
        for key, name in _MODULES.items():
            try:
                modules[key] = importlib.import_module(name)
            except ImportError as exc:
                where = f"in {self.code_path}" if self.code_path else "on the Python path"
                raise BackendError(
                    f"WMarkGPTBackend needs the authors' code: {name} could not be imported "
                    f"{where} ({type(exc).__name__}: {exc}). Clone "
                    "https://github.com/TanSongBai/WMarkGPT, install its requirements and pass "
                    "code_path=<the clone>."
                ) from exc
        self._modules = modules
        return modules

    def _load(self) -> dict[str, Any]:
        if self._loaded is None:
            torch = require("torch", "llm")
            transformers = require("transformers", "llm")
            code = self._code()
            cls = code["modeling"].MPLUGOwl2LlamaForCausalLM
            device, dtype = resolve_device_and_dtype(
                torch, self.device, self.dtype, gpu_dtype="float16"
            )
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_path)
            processor = transformers.CLIPImageProcessor.from_pretrained(self.model_path)
            config = cls.config_class.from_pretrained(self.model_path)
            config.name_or_path = str(self.model_path)  # their constructor loads the weights
            model = cls(config)
            self._check_weights(model, torch)
            model = model.to(getattr(torch, dtype)).to(device).eval()
            self._loaded = {
                "torch": torch,
                "tokenizer": tokenizer,
                "processor": processor,
                "model": model,
                **code,
            }
        return self._loaded

    def _check_weights(self, model: Any, torch: Any) -> None:
        """Every weight of ``model`` must be in the folder's ``pytorch_model*.bin`` files."""
        stored: set[str] = set()
        for shard in sorted(self.model_path.glob("pytorch_model*.bin")):
            try:
                try:  # mmap: the names without reading the tensors
                    names = torch.load(shard, map_location="cpu", mmap=True, weights_only=True)
                except RuntimeError:  # a file in torch's legacy (not zip) format: no mmap
                    names = torch.load(shard, map_location="cpu", weights_only=True)
            except (EOFError, RuntimeError, pickle.UnpicklingError) as exc:
                # an empty file (torch's EOFError has no text) or a damaged one
                why = str(exc).split(". ")[0] if str(exc) else "empty or cut short"
                raise BackendError(
                    f"{shard} could not be read ({why}): download it again"
                ) from None
            stored.update(names)
        missing = sorted(set(model.state_dict()) - stored)
        if missing:
            shown = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
            raise BackendError(
                f"{len(missing)} of the model's {len(model.state_dict())} weights are not in "
                f"the pytorch_model*.bin files of {self.model_path} ({shown}); the authors' loader "
                "(strict=False) would have left them at random values"
            )

    # ---- prompts ---------------------------------------------------------------------------
    def prompt(self, question: str) -> str:
        """The text before the answer, from the authors' ``"mplug_owl2"`` template."""
        if not isinstance(question, str) or not question.strip():
            raise InputError.bad("question", "a non-empty string", question)
        code = self._code()  # the template needs the authors' code, not the weights
        conv = code["conversation"].conv_templates[CONVERSATION_TEMPLATE].copy()
        conv.append_message(conv.roles[0], question + "\n" + code["constants"].DEFAULT_IMAGE_TOKEN)
        conv.append_message(conv.roles[1], None)
        return conv.get_prompt()

    def readout_text(self, question: str | None = None) -> str:
        """The prompt whose next token is read by :meth:`level_logits`."""
        from trustlab.watermark.describer import QUESTIONS

        base = self.prompt(QUESTIONS[0] if question is None else question)
        return base + " " + (READOUT_PROMPT if self.compat else READOUT_PROMPT.rstrip())

    def level_token_ids(self) -> list[int]:
        """The token read for each level word (LEVELS order)."""
        if self._level_ids is None:
            tok = self._load()["tokenizer"]
            if not self.compat:
                self._level_ids = level_word_ids(tok, self.model_path)
            else:  # theirs: the second id of each word tokenised on its own (after BOS)
                ids = [tok(word)["input_ids"] for word in LEVELS]
                if any(len(i) < 2 for i in ids):
                    raise BackendError(
                        f"compat readout: a level word of {LEVELS} tokenises to fewer than two "
                        f"ids in the tokenizer of {self.model_path}"
                    )
                self._level_ids = [int(i[1]) for i in ids]
        return self._level_ids

    def _input_ids(self, text: str) -> Any:
        parts = self._load()
        ids = parts["mm_utils"].tokenizer_image_token(
            text, parts["tokenizer"], parts["constants"].IMAGE_TOKEN_INDEX, return_tensors="pt"
        )
        return ids.unsqueeze(0).to(parts["model"].device)

    def pixel_values(self, image: np.ndarray) -> Any:
        """The image padded to a square with the processor's mean colour, then preprocessed."""
        parts = self._load()
        processor, model = parts["processor"], parts["model"]
        h, w = image.shape[:2]
        side = max(h, w)
        fill = np.array([int(m * 255) for m in processor.image_mean], dtype=np.uint8)
        square = np.empty((side, side, 3), dtype=np.uint8)
        square[...] = fill
        top, left = (side - h) // 2, (side - w) // 2
        square[top : top + h, left : left + w] = image
        pixels = processor.preprocess(square, return_tensors="pt")["pixel_values"]
        return pixels.to(device=model.device, dtype=model.dtype)

    # ---- the protocol ----------------------------------------------------------------------
    def answer(self, image: np.ndarray, question: str) -> str:
        return self.answer_batch([check_one_image(image)], [question])[0]

    def answer_batch(self, images: Sequence[np.ndarray], questions: Sequence[str]) -> list[str]:
        """Answers one image at a time (the authors' model takes one prompt per call)."""
        imgs, questions = check_images_and_questions(images, questions)
        prompts = [self.prompt(q) for q in questions]
        parts = self._load()
        torch, model, tok = parts["torch"], parts["model"], parts["tokenizer"]
        stop = parts["conversation"].conv_templates[CONVERSATION_TEMPLATE].sep2
        keywords = getattr(parts["mm_utils"], "KeywordsStoppingCriteria", None)
        out = []
        for img, q, text in zip(imgs, questions, prompts, strict=True):
            ids = self._input_ids(text)
            kwargs: dict[str, Any] = {"max_new_tokens": self.max_new_tokens, "use_cache": True}
            if self.temperature > 0:
                kwargs.update(do_sample=True, temperature=self.temperature)
            else:
                kwargs.update(do_sample=False)
            if keywords is not None and stop:
                kwargs["stopping_criteria"] = [keywords([stop], tok, ids)]
            with seeded_torch(self.seed_of(img, q)), torch.inference_mode():
                generated = model.generate(ids, images=self.pixel_values(img), **kwargs)
            text_out = tok.decode(generated[0, ids.shape[1] :], skip_special_tokens=True).strip()
            if stop and text_out.endswith(stop):  # the whole separator only, never characters
                text_out = text_out[: -len(stop)].rstrip()
            out.append(text_out)
        return out

    def seed_of(self, image: np.ndarray, question: str) -> int:
        """The sampling seed of one answer (from ``random_state``, the image and the question)."""
        h = hashlib.sha256(f"{self.random_state}|{question}|".encode())
        h.update(np.ascontiguousarray(image).tobytes())
        return int.from_bytes(h.digest()[:4], "little")

    def level_logits(self, image: np.ndarray, question: str | None = None) -> np.ndarray:
        """Next-token logits of the five level words after the readout prompt."""

        img = check_one_image(image)
        ids = self.level_token_ids()
        parts = self._load()
        torch = parts["torch"]
        inputs = self._input_ids(self.readout_text(question))
        with torch.inference_mode():
            logits = parts["model"](inputs, images=self.pixel_values(img))["logits"][0, -1]
        return logits[ids].float().cpu().numpy().astype(np.float64)
