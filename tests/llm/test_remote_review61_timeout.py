"""RemoteModel's timeout has an upper bound (review 61): a socket's timeout ends near 9.2e9 s, and
a larger one failed every request with a raw OverflowError instead of an InputError."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.llm import RemoteModel

pytest.importorskip("httpx")


@pytest.mark.parametrize("timeout", [1e10, 1e300])
def test_a_timeout_past_the_socket_limit_is_an_input_error(timeout):
    with pytest.raises(InputError, match=r"timeout: expected a number in \(0, 1e\+09\]"):
        RemoteModel("http://127.0.0.1:9/v1", "m", timeout=timeout)


def test_the_largest_timeout_is_accepted():
    model = RemoteModel("http://127.0.0.1:9/v1", "m", timeout=1e9)  # remote.MAX_TIMEOUT_S
    assert model.timeout == 1e9
    model.close()
