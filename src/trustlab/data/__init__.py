"""Bundled real datasets, loaded offline.

>>> from trustlab.data import load_dataset
>>> chile = load_dataset("chile")
>>> chile.label, chile.protected[0], len(chile.frame) > 2000
('vote', 'region', True)
"""

from trustlab.data.datasets import Dataset, list_datasets, load_dataset

__all__ = ["Dataset", "list_datasets", "load_dataset"]
