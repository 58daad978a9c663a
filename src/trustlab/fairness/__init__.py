"""Fairness audits: multiclass disparate conditional prediction (DCP)."""
