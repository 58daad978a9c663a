"""Review 58: a base URL with port 0 is refused (nothing can be reached on port 0)."""

import pytest

from trustlab.errors import InputError
from trustlab.llm import RemoteModel


@pytest.mark.parametrize("url", ["http://localhost:0/v1", "https://example.org:00"])
def test_port_zero_is_refused_naming_base_url(url):
    # before: accepted; every call then failed to connect
    with pytest.raises(InputError, match=r"^base_url: .*with a valid port \(1 to 65535\)"):
        RemoteModel(url, "m")


def test_ports_one_and_65535_are_accepted():
    assert RemoteModel("http://localhost:1", "m").base_url == "http://localhost:1/v1"
    assert RemoteModel("http://localhost:65535/v1", "m").base_url == "http://localhost:65535/v1"
