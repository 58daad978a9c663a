"""The checkpoint key of texts holding a NUL is no key of NUL-free texts (diff review 64 N of
bd9b2e83): keyed as "json:" + their JSON list, ["a\\x00b"] shared its key with the one text
'json:["a\\u0000b"]' (same n_texts), so a checkpoint folder of one would resume for the other.
"""

from __future__ import annotations

import json

import pytest

from trustlab.interpret.sae import cache as cache_module


@pytest.mark.parametrize("texts", [["a\x00b"], ["ab\x00", "c"]])
def test_a_nul_text_key_is_no_join_of_other_texts(texts):
    forged = ["json:" + json.dumps(texts)] if len(texts) == 1 else ["", "json:" + json.dumps(texts)]
    assert cache_module._texts_digest(texts) != cache_module._texts_digest(forged)
