"""The page header reads its values as the tables do (review 54): a missing value read 'None'
(the audit deleted meta.split to avoid 'Split None'; other pages' meta could still show it) and
numbers in a dict or list were printed raw ('train: 1266' beside a table's '1,266')."""

from trustlab.report import Report


def header(meta: dict) -> str:
    html = Report("t", meta).to_html()
    return html[html.index('<dl class="meta">') : html.index("</dl>")]


def test_missing_values_read_n_a_and_numbers_as_in_the_tables():
    page = header(
        {
            "threshold": None,
            "score": float("nan"),
            "rows": {"train": 1266, "test": None, "share": 0.123456},
            "sizes": [12345, None, 0.5],
            "name": "chile",
        }
    )
    assert "<dd>n/a</dd>" in page and "None" not in page and "nan" not in page
    assert "<dd>train: 1,266, test: n/a, share: 0.1235</dd>" in page
    assert "<dd>12,345, n/a, 0.5000</dd>" in page
    assert "<dd>chile</dd>" in page


def test_a_seed_reads_as_written_and_amounts_keep_their_separator():
    import numpy as np

    # 'Random state: 12,345' read as an amount (trustlab audit --seed 12345)
    page = header({"random_state": 12345, "seed": np.int64(20261205), "rows": 12345})
    assert "<dd>12345</dd>" in page and "<dd>20261205</dd>" in page
    assert "<dd>12,345</dd>" in page  # rows are an amount
