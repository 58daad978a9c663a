"""RemoteModel.generate checks ``progress`` before any request (review 61): a non-callable one
was called only after the first answer, so progress=5 sent requests (2 of 3 here) and then
failed with a bare TypeError ("'int' object is not callable")."""

from __future__ import annotations

import pytest
from test_server import Reverser

from trustlab.errors import InputError
from trustlab.llm import RemoteModel, make_server


def test_a_progress_that_is_not_callable_fails_before_any_request():
    backend = Reverser()
    with make_server(backend, port=0) as server, RemoteModel(server.url, "reverser") as model:
        with pytest.raises(InputError, match=r"progress: expected a callable \(done, total\)"):
            model.generate(["a", "b", "c"], progress=5, chat=False)
        assert backend.calls == []
        seen = []
        assert model.generate(["ab"], progress=lambda *a: seen.append(a), chat=False) == ["text ba"]
        assert seen == [(1, 1)]
