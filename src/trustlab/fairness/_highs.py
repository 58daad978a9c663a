"""A HiGHS solver that never writes to the console, shared by both DCP regimes."""

from __future__ import annotations

import highspy

__all__ = ["QuietHighs"]


class QuietHighs(highspy.Highs):
    """``highspy.Highs`` that never writes to the console.

    ``highspy.Highs.__init__`` registers its Python callback hub (``setCallback``) right after
    creating the solver, and HiGHS prints its banner on that first call because ``output_flag``
    is still on: the first ``Highs()`` of a process writes to stdout before any option can be
    set. This constructs the solver alone and switches output off at once; the callback hub is not
    needed: both DCP regimes use only ``passModel``, ``setBasis``/``getBasis``, ``run`` and the
    solution getters.
    """

    def __init__(self):
        super(highspy.Highs, self).__init__()  # the solver only, not highspy.Highs.__init__
        self.setOptionValue("output_flag", False)
