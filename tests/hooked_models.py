"""A stand-in language model with the shape Safe Flow needs: sizes and ``intervene`` (the hook
it installs is kept in ``hook`` for the test to apply to states)."""

import contextlib


class HookedModel:
    """The shape Safe Flow needs from a language model: sizes and ``intervene``."""

    name, n_layers = "hooked", 2

    def __init__(self, width):
        self.hidden_size, self.hook = width, None

    @contextlib.contextmanager
    def intervene(self, layer, fn):
        self.hook = fn
        try:
            yield
        finally:
            self.hook = None
