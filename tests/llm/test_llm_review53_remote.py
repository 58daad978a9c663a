"""Review pass 53: Ctrl-C during RemoteModel.generate does not wait for the requests in flight."""

from __future__ import annotations

import _thread
import socket
import threading
import time

import pytest

from trustlab.llm import RemoteModel


@pytest.fixture
def silent_endpoint():
    """An endpoint that reads requests and never answers; ``closed`` is set when a client
    gives up on one (closes its connection)."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted, closed, stop = [], threading.Event(), threading.Event()

    def hold(conn):
        conn.settimeout(0.05)
        while not stop.is_set():
            try:
                if conn.recv(65536) == b"":
                    closed.set()
                    return
            except TimeoutError:
                continue
            except OSError:
                return

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn)
            threading.Thread(target=hold, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", accepted, closed
    stop.set()
    listener.close()
    for conn in accepted:
        conn.close()


def test_ctrl_c_returns_while_the_requests_are_still_unanswered(silent_endpoint, ctrl_c_raises):
    url, accepted, closed = silent_endpoint
    model = RemoteModel(url, "m", timeout=10, max_retries=1, backoff=0.01, max_concurrency=2)

    def interrupt():
        deadline = time.monotonic() + 30
        while len(accepted) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        _thread.interrupt_main()  # Ctrl-C while both requests wait for the server

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        model.generate(["a", "b", "c", "d"], 4)
    # the call came back before any request timed out (a thread pool joined them: the call
    # returned only after every request's timeouts and retries, here 2 x 10 s)
    assert not closed.is_set()
    assert len(accepted) == 2  # no prompt was sent after the interrupt
