"""Fixtures for the language-model tests (the model itself is the session fixture ``smollm2``)."""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer

import pytest


@pytest.fixture(scope="session")
def direct_greedy():
    """``run(lm, ids, n_tokens, top=0)``: greedy decoding by full, unpadded forward passes.

    No cache and no batch: the oracle for the token loop. Returns one ``(token id, log-softmax
    value, [(alternative id, value), ...])`` per generated token, stopping at end-of-sequence.
    """
    import torch

    def run(lm, ids, n_tokens, top=0):
        ids, out = list(ids), []
        for _ in range(n_tokens):
            with torch.inference_mode():
                logits = lm.model(torch.tensor([ids])).logits[0, -1].double()
            logp = torch.log_softmax(logits, dim=-1)
            token = int(logp.argmax())
            if token == lm.tokenizer.eos_token_id:
                break
            values, alternatives = torch.topk(logp, top)
            out.append(
                (
                    token,
                    float(logp[token]),
                    list(zip(alternatives.tolist(), values.tolist(), strict=True)),
                )
            )
            ids.append(token)
        return out

    return run


@pytest.fixture
def serve_handler():
    """``serve_handler(Handler)``: a ``ThreadingHTTPServer`` on a free local port answering with
    the ``http.server`` request handler class ``Handler`` from a daemon thread; every server
    started is shut down and closed after the test. Its port: ``server.server_address[1]``."""
    servers = []

    def start(handler):
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
