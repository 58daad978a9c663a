"""Adam with torch.optim.Adam's defaults and CPU arithmetic, written out (torch imported on use).

Shared by the training loops that run many small steps (UEFL's local training, the safety
polytope): ``torch.optim.Adam`` costs more per step than the update itself on small tensors
(profiling hooks, state lookups), and constructing it imports ``torch._dynamo`` (seconds), which
every fresh process (a Flower ClientApp per message) would pay. Tested bit for bit against
``torch.optim.Adam`` (tests/federated/test_uefl_math.py, tests/safety/test_polytope_train_review62.py).
"""

from __future__ import annotations

from trustlab._lazy import require

__all__ = ["Adam"]


class Adam:
    """Adam (Kingma and Ba) with the defaults of ``torch.optim.Adam`` (betas 0.9 / 0.999,
    eps 1e-8, no weight decay), step for step the same arithmetic as its CPU implementation
    (``learning_rate`` is torch's ``lr``).

    Use it as torch's: ``zero_grad()``, ``loss.backward()``, ``step()``. Parameters without a
    gradient in a step are left alone, as torch does.

    Examples
    --------
    >>> import torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    >>> opt = Adam([w], learning_rate=0.1)
    >>> (w ** 2).sum().backward(); opt.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.9, -1.9]
    """

    def __init__(self, params, learning_rate: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8):
        torch = require("torch", "torch")
        self.params = list(params)
        self.learning_rate = float(learning_rate)
        self.betas, self.eps = tuple(map(float, betas)), float(eps)
        self.steps = [0] * len(self.params)
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]
        self._torch = torch  # one import look-up, not one per step

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        torch = self._torch
        beta1, beta2 = self.betas
        groups: dict[int, list[int]] = {}  # step count -> the parameters at it
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            self.steps[i] += 1
            groups.setdefault(self.steps[i], []).append(i)
        with torch.no_grad():
            # One call per operation over the parameters at one step count (usually all of
            # them): on CPU each _foreach_ op runs torch's per-tensor op on every tensor, so
            # the arithmetic is that of the loop ``m.lerp_(g, 1 - beta1); v.mul_(beta2)
            # .addcmul_(g, g, value=1 - beta2); p.addcdiv_(m, v.sqrt() / sqrt(bias2) + eps,
            # value=-step_size)``, bit for bit (tested), with less Python per step.
            for step, members in groups.items():
                params = [self.params[i] for i in members]
                grads = [p.grad for p in params]
                m = [self.exp_avg[i] for i in members]
                v = [self.exp_avg_sq[i] for i in members]
                torch._foreach_lerp_(m, grads, 1 - beta1)
                torch._foreach_mul_(v, beta2)
                torch._foreach_addcmul_(v, grads, grads, value=1 - beta2)
                step_size = self.learning_rate / (1 - beta1**step)
                denom = torch._foreach_sqrt(v)
                torch._foreach_div_(denom, (1 - beta2**step) ** 0.5)
                torch._foreach_add_(denom, self.eps)
                torch._foreach_addcdiv_(params, m, denom, value=-step_size)
