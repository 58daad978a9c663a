"""Stop a save at one of its files, as a Ctrl-C between two writes would: the tests of
interrupted overwrites (review 65) share this."""

from contextlib import ExitStack, contextmanager
from unittest import mock

import pytest

import trustlab._results as results


@contextmanager
def stopped_at(module, file_name):
    """Within the block, ``write_atomic`` raises KeyboardInterrupt when it comes to the file
    ``file_name``, and the block must be stopped there (pytest fails it otherwise).

    ``write_atomic`` is stopped where the saver calls it: ``module.write_atomic`` when ``module``
    has one, and always ``trustlab._results.write_atomic``, the one the shared
    ``replace_saved`` calls (review 67: the savers of model folders write through it)."""
    write = results.write_atomic

    def stop(path, *args):
        if path.name == file_name:
            raise KeyboardInterrupt
        return write(path, *args)

    with ExitStack() as patches:
        patches.enter_context(mock.patch.object(results, "write_atomic", stop))
        if hasattr(module, "write_atomic"):
            patches.enter_context(mock.patch.object(module, "write_atomic", stop))
        patches.enter_context(pytest.raises(KeyboardInterrupt))
        yield
