"""Review pass 55: a ``cache_dir`` that is not a path is an InputError naming it, before anything
loads (``load_model(name, cache_dir=123)`` raised pathlib's TypeError 'expected str, bytes or
os.PathLike object, not int')."""

import pytest

from trustlab.errors import InputError
from trustlab.llm import load_model


@pytest.mark.parametrize("cache_dir", [123, ["/tmp"], b"/tmp"])
def test_a_cache_dir_that_is_not_a_path_is_refused_naming_it(cache_dir):
    with pytest.raises(InputError, match=r"^cache_dir: expected None or a folder path"):
        load_model("smollm2-135m-instruct", cache_dir=cache_dir)
