"""run_loopback's and run_flower_app's arguments, checked before any Flower process starts
(review 65); no Flower run here."""

import pytest

from trustlab.errors import InputError
from trustlab.federated.flower_launch import run_loopback


def test_a_workdir_that_is_a_file_is_an_input_error(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    for workdir in (afile, afile / "sub"):  # was a raw FileExistsError / NotADirectoryError
        with pytest.raises(InputError, match="^workdir: expected a directory"):
            run_loopback(n_silos=2, workdir=workdir)
