"""ANOVA-TPNN component PNGs of long column names get file names the file system takes (diff
review 65 T). A 293-character column name (a survey question) gave component_<name>.png of 307
bytes (650 for a pair of two), over the 255-byte limit: OSError 'File name too long'."""

from trustlab.explain.anova_tpnn.results import component_files

QUESTION = "How satisfied were you overall with the service you received from our team? " * 4


def test_long_component_names_are_cut_and_stay_distinct():
    first, second = QUESTION + "(first visit)", QUESTION + "(second visit)"
    names = component_files([first, second, f"{first} & {second}", "é" * 200, "age"])
    assert all(len(n.encode("utf-8")) <= 120 for n in names), names
    assert len(set(names)) == 5 and names[0].startswith("component_How_satisfied_were")
    assert names[1].endswith("_2.png") and names[3] == "component_" + "é" * 50 + ".png"
    assert names[4] == "component_age.png"
