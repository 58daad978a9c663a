"""A bad API key is refused without showing it, saying what came: an empty key 'got an empty
string' (it said "got '<hidden>'", as if a key were hidden there), another type by its type;
the command line says 'a non-empty value' (not Python's 'or None')."""

import pytest

from cli_helpers import one_line, run_main
from trustlab.errors import InputError
from trustlab.llm import RemoteModel


@pytest.mark.parametrize("key, got", [("", "an empty string"), (5, "a value of type int (hidden)")])
def test_the_library_says_what_came_without_showing_it(key, got):
    with pytest.raises(InputError) as exc:
        RemoteModel("http://127.0.0.1:9/v1", "m", api_key=key)
    assert str(exc.value) == f"api_key: expected a non-empty string or None, got {got}"


def test_serve_refuses_an_empty_key_in_one_line_before_loading(capsys):
    args = ["llm", "serve", "--model", "smollm2-135m-instruct", "--api-key", ""]
    code, out, err = run_main(args, capsys)
    assert (code, out) == (2, "")
    assert one_line(err) == (
        "trustlab: error: --api-key: expected a non-empty value, got an empty string"
    )
