"""write_atomic gives its output the mode a plain open() would under the user's umask (diff review
64 O): it set 0644 whatever the umask, so a user with umask 077 got world-readable outputs where
the same file written in place (model weights, before e38b9a27) was 0600."""

import os
import stat

import pytest

from trustlab._results import write_atomic


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
@pytest.mark.parametrize("umask", [0o077, 0o022, 0o027])
def test_mode_follows_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        written = write_atomic(tmp_path / "out.json", "{}")
        plain = tmp_path / "plain.json"
        plain.write_text("{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(written.stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE(written.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
