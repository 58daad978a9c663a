"""Review 58: list_datasets() lists the tables load_dataset loads, and says where the bundled graph
dataset (qm9_carbonyl, listed by ``trustlab data list``) is described; its docstring said "every
bundled dataset" while it omitted qm9_carbonyl."""

from trustlab.data import list_datasets, load_dataset


def test_every_listed_dataset_loads_and_the_docstring_names_the_graph_dataset():
    for info in list_datasets():
        assert load_dataset(info["name"]).name == info["name"]
    doc = " ".join(list_datasets.__doc__.split())
    assert "every bundled table" in doc and "qm9_carbonyl_info()" in doc
    assert "trustlab data list" in doc


def test_the_docstring_names_the_keys_the_graph_description_adds():
    # diffA 58: it said qm9_carbonyl_info() has "the same keys"; it has two more
    from trustlab.explain.equigx.data import qm9_carbonyl_info

    extra = set(qm9_carbonyl_info()) - set(list_datasets()[0])
    assert extra == {"kind", "loader"} and not set(list_datasets()[0]) - set(qm9_carbonyl_info())
    doc = " ".join(list_datasets.__doc__.split())
    assert "same keys" not in doc and "two more (``kind``, ``loader``)" in doc
