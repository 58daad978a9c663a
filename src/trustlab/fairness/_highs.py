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
    needed: both DCP regimes use only :meth:`pass_lp` and :meth:`run_from`.

    Parameters
    ----------
    **options
        HiGHS options set once (``presolve="off"``, ``simplex_strategy=4`` ...).
    """

    def __init__(self, **options):
        super(highspy.Highs, self).__init__()  # the solver only, not highspy.Highs.__init__
        self.setOptionValue("output_flag", False)
        for option, value in options.items():
            self.setOptionValue(option, value)

    def pass_lp(
        self, cost, col_lower, col_upper, row_lower, row_upper, starts, index, values, *, rowwise
    ) -> bool:
        """Pass the LP min cost.x, row_lower <= A x <= row_upper, col_lower <= x <= col_upper.

        ``A`` is given by ``starts``, ``index`` and ``values``, row-wise (CSR) when ``rowwise``
        else column-wise (CSC); every column is continuous. Returns False when HiGHS rejects the
        model (then :meth:`run_from` would solve the previous one).
        """
        status = self.passModel(
            len(cost),  # columns
            len(row_upper),  # rows
            len(values),  # non-zeros
            int(highspy.MatrixFormat.kRowwise if rowwise else highspy.MatrixFormat.kColwise),
            int(highspy.ObjSense.kMinimize),
            0.0,  # objective offset
            cost,
            col_lower,
            col_upper,
            row_lower,
            row_upper,
            starts,
            index,
            values,
            np.zeros(len(cost), dtype=np.int32),  # integrality: all continuous
        )
        return status != highspy.HighsStatus.kError

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
