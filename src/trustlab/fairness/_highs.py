"""A HiGHS solver that never writes to the console, shared by both DCP regimes."""

from __future__ import annotations

import highspy
import numpy as np

__all__ = ["QuietHighs"]


class QuietHighs(highspy.Highs):
    """``highspy.Highs`` that never writes to the console.

    ``highspy.Highs.__init__`` registers its Python callback hub (``setCallback``) right after
    creating the solver, and HiGHS prints its banner on that first call because ``output_flag``
    is still on: the first ``Highs()`` of a process writes to stdout before any option can be
    set. This constructs the solver alone and switches output off at once; the callback hub is not
    needed: both DCP regimes use only ``passModel`` and ``run_from`` (``setBasis``/``getBasis``,
    ``run`` and the solution getters).
    """

    def __init__(self):
        super(highspy.Highs, self).__init__()  # the solver only, not highspy.Highs.__init__
        self.setOptionValue("output_flag", False)

    def run_from(self, basis, *, keep_basis: bool = True):
        """Solve the passed model, starting from ``basis`` when given (a previous optimum).

        Returns ``(column values, basis to start the next solve from)``; ``(None, None)`` when
        the model is not solved to optimality (the caller then drops its basis).
        """
        if basis is not None:
            self.setBasis(basis)
        self.run()
        if self.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None, None
        x = np.asarray(self.getSolution().col_value, dtype=np.float64)
        return x, (self.getBasis() if keep_basis else None)
