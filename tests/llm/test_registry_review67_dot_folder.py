"""A model folder given as '.' or '..' is named after the folder it stands for (review 67).

Measured on 1b2aaee5: in a Hugging Face model folder ``m`` (a tiny Llama saved there),
``load_model(".")`` gave a model whose ``name`` was '' (``Path(".").name``; load_model names the
model after ``resolve_source``), shown empty in reports and ``repr``; ``".."`` from a folder
inside it gave the name '..'. Now both are 'm' (the resolved folder's name); a folder given by
its own path keeps its name as written. resolve_source only looks for config.json, so the test
needs no model.
"""

from __future__ import annotations

from trustlab.llm.registry import resolve_source


def test_dot_and_dot_dot_name_the_folder(tmp_path, monkeypatch):
    folder = tmp_path / "m"
    (folder / "inner").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    monkeypatch.chdir(folder)
    assert resolve_source(".").name == "m"
    assert resolve_source("./").name == "m"
    monkeypatch.chdir(folder / "inner")
    assert resolve_source("..").name == "m"
    assert resolve_source("../.").name == "m"
    assert resolve_source(folder).name == "m"
    assert resolve_source(folder).kind == "hf"
