"""Stop a save at one of its files, as a Ctrl-C between two writes would: the tests of
interrupted overwrites (review 65) share this."""

from contextlib import contextmanager
from unittest import mock

import pytest


@contextmanager
def stopped_at(module, file_name):
    """Within the block, ``module.write_atomic`` raises KeyboardInterrupt when it comes to the
    file ``file_name``, and the block must be stopped there (pytest fails it otherwise)."""
    write = module.write_atomic

    def stop(path, *args):
        if path.name == file_name:
            raise KeyboardInterrupt
        return write(path, *args)

    with mock.patch.object(module, "write_atomic", stop), pytest.raises(KeyboardInterrupt):
        yield
