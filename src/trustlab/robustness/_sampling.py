"""Counting a base classifier's labels under Gaussian noise, batched across points.

Every point owns its own random stream (a numpy Generator seeded from the run's entropy and the
point's index), so the counts of a point do not depend on which other points share its batches,
on the batch size, on the number of workers or on a resumed run: the noise a point sees is the
start of its own stream, drawn in order. The noise is float32 (standard normal times sigma),
which is ample for smoothing and halves the memory and the cost of drawing it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from trustlab._checks import as_float_array, check_positive
from trustlab.errors import InputError

__all__ = [
    "MAX_SIGMA",
    "check_radii",
    "check_sigma",
    "LabelFunction",
    "count_labels",
    "eval_mode",
    "is_torch_module",
    "point_streams",
]


#: The largest noise level accepted: the noise is drawn in float32 (largest 3.4e38), and a
#: radius is sigma times a few tens at most, so neither overflows to infinity.
MAX_SIGMA = 1e36


def check_radii(radii: Any) -> np.ndarray:
    """``radii`` as a float array (at least 1-D) of finite radii >= 0; a negative radius, which
    the accuracy curves read as 0, is refused."""
    eps = np.atleast_1d(as_float_array(radii, "radii"))
    if eps.ndim > 1:  # a table of radii made a table per point, or a single curve, unasked
        raise InputError.bad("radii", "a radius or a 1-D list of radii", radii)
    if np.any(eps < 0):
        raise InputError.bad("radii", "radii >= 0 (an L2 distance)", radii)
    return eps


def check_sigma(sigma: Any) -> float:
    """A noise level ``0 < sigma <= MAX_SIGMA`` (as a float); a larger one would make the
    float32 noise infinite (the base model then sees NaN) or a radius overflow to inf, which
    reads as a certificate without harmful targets."""
    value = check_positive(sigma, "sigma")
    if value > MAX_SIGMA:
        raise InputError.bad(
            "sigma",
            f"a noise level of at most {MAX_SIGMA:g} (the noise is drawn in float32, whose "
            "largest value is 3.4e+38)",
            sigma,
        )
    return value


def is_torch_module(model: Any) -> bool:
    """True for a ``torch.nn.Module``; never imports torch itself."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(model, torch.nn.Module)


@contextmanager
def eval_mode(model: Any) -> Iterator[None]:
    """A torch module in eval mode for the block (its mode restored after); others unchanged.

    Callers put the model in eval mode once around a whole run, so that worker threads nested
    inside never switch the mode under each other.
    """
    if not (is_torch_module(model) and model.training):
        yield
        return
    model.eval()
    try:
        yield
    finally:
        model.train(True)


def point_streams(entropy: int, indices: Sequence[int]) -> list[np.random.Generator]:
    """One independent Generator per point, keyed by the run's entropy and the point's index."""
    return [
        np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=(int(i),))))
        for i in indices
    ]


class LabelFunction:
    """The base classifier as a function from a batch of inputs to integer labels.

    A torch module is run in eval mode without gradients on the module's device and dtype; its
    output, ``(batch, K)`` scores (the width checked first), is reduced by argmax. Any other
    callable receives a numpy array of shape ``(batch, *input_shape)`` and returns ``(batch, K)``
    class scores or ``(batch,)`` labels. A torch module's shape error on the inputs (torch's
    RuntimeError) is an InputError naming ``argument``, the inputs as the caller named them.
    """

    def __init__(self, model: Any, n_classes: int, argument: str = "X"):
        self.model = model
        self.n_classes = n_classes
        self.argument = argument
        self.torch = is_torch_module(model)

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        output = self._torch_output(batch) if self.torch else np.asarray(self.model(batch))
        return self._labels(output, len(batch))

    def _torch_output(self, batch: np.ndarray) -> np.ndarray:
        import torch

        model = self.model
        parameter = next(model.parameters(), None)
        device = parameter.device if parameter is not None else torch.device("cpu")
        dtype = parameter.dtype if parameter is not None else torch.float32
        with eval_mode(model), torch.inference_mode():
            tensor = torch.from_numpy(np.ascontiguousarray(batch)).to(device, dtype)
            try:
                output = model(tensor)
            except RuntimeError as exc:  # raised before any work is done: costs nothing after
                raise self._refused_inputs(batch.shape[1:], exc) from exc
            if output.ndim == 2:  # scores: their width is checked before the argmax
                if tuple(output.shape) != (len(batch), self.n_classes):
                    raise self._bad_shape(output, len(batch))
                self._refuse_nan(int(output.isnan().any(dim=1).sum()), len(batch))
                output = output.argmax(dim=1)
            return output.cpu().numpy()

    def _refused_inputs(self, shape: tuple[int, ...], exc: RuntimeError) -> Exception:
        """An InputError for inputs of ``shape`` the module could not take (torch's own error
        when it is not about the inputs' shape)."""
        import torch

        width = None
        for module in self.model.modules():  # the first layer holding parameters
            if next(module.parameters(recurse=False), None) is not None:
                if isinstance(module, torch.nn.Linear) and module.in_features > 0:
                    width = module.in_features
                break
        got = shape[-1] if shape else 1
        if width is not None and got != width:
            return InputError(
                f"{self.argument}: expected inputs of {width} features (the in_features of the "
                f"base model's first layer), got {got} features (inputs of shape {shape})",
                argument=self.argument,
            )
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if not any(word in text.lower() for word in ("shape", "size", "channels")):
            return exc
        return InputError(
            f"{self.argument}: expected inputs the base model takes, got inputs of shape "
            f"{shape}, which it refused ({text})",
            argument=self.argument,
        )

    @staticmethod
    def _refuse_nan(rows: int, size: int) -> None:
        """NaN scores have no argmax (numpy and torch both return the first NaN's class, which
        would be counted, and certified, as the prediction)."""
        if rows:
            raise InputError(
                "base_model output: expected class scores without NaN (a NaN score has no top "
                f"class), got NaN scores for {rows} of {size} noisy inputs",
                argument="base_model output",
            )

    def _bad_shape(self, got: Any, size: int) -> InputError:
        return InputError.bad(
            "base_model output",
            f"({size}, {self.n_classes}) class scores or ({size},) labels for a batch of {size}",
            got,
        )

    def _labels(self, output: np.ndarray, size: int) -> np.ndarray:
        if output.ndim == 2 and output.shape == (size, self.n_classes):
            if output.dtype.kind in "fc":
                self._refuse_nan(int(np.isnan(output).any(axis=1).sum()), size)
            return np.argmax(output, axis=1)
        if output.ndim != 1 or output.shape[0] != size:
            raise self._bad_shape(output, size)
        labels = output
        if labels.dtype.kind == "f":
            if not np.all(np.isfinite(labels)) or np.any(labels != np.round(labels)):
                raise InputError.bad("base_model output", "integer class labels", output)
        elif labels.dtype.kind not in "iub":
            raise InputError.bad("base_model output", "integer class labels", output)
        labels = labels.astype(np.intp)
        if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise InputError.bad(
                "base_model output",
                f"labels in [0, {self.n_classes})",
                f"labels from {labels.min()} to {labels.max()}",
            )
        return labels


def count_labels(
    labels_of: Callable[[np.ndarray], np.ndarray],
    X: np.ndarray,
    num: int,
    streams: list[np.random.Generator],
    sigma: float,
    n_classes: int,
    batch_size: int,
) -> np.ndarray:
    """Counts of ``labels_of(X[i] + noise)`` over ``num`` draws of each point's own stream.

    Points are packed back to back into batches of ``batch_size`` rows (a point may span
    several batches), so small ``num`` and large ``num`` both keep the model's batches full.

    Returns
    -------
    (len(X), n_classes) int64 array
    """
    m = len(X)
    counts = np.zeros((m, n_classes), dtype=np.int64)
    if num == 0 or m == 0:
        return counts
    rows = min(batch_size, m * num)
    buffer = np.empty((rows, *X.shape[1:]), dtype=np.result_type(X.dtype, np.float32))
    noise = np.empty((rows, *X.shape[1:]), dtype=np.float32)
    owner = np.empty(rows, dtype=np.intp)
    point, drawn = 0, 0  # the point being filled and how many of its draws are done
    while point < m:
        filled = 0
        while filled < rows and point < m:
            take = min(num - drawn, rows - filled)
            part = slice(filled, filled + take)
            streams[point].standard_normal(out=noise[part], dtype=np.float32)
            np.multiply(noise[part], np.float32(sigma), out=noise[part])
            np.add(X[point], noise[part], out=buffer[part])
            owner[part] = point
            filled += take
            drawn += take
            if drawn == num:
                point, drawn = point + 1, 0
        labels = labels_of(buffer[:filled])
        first = owner[0]
        local = (owner[:filled] - first) * n_classes + labels
        span = owner[filled - 1] - first + 1
        counts[first : first + span] += np.bincount(local, minlength=span * n_classes).reshape(
            span, n_classes
        )
    return counts
