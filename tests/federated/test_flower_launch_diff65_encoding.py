"""The app's pyproject.toml is UTF-8 whatever the locale (diff review 65 of 2be5b0a8); no Flower
run here."""

import io


def test_run_flower_app_reads_a_non_ascii_result_dir_under_a_non_utf8_locale(tmp_path, monkeypatch):
    from trustlab.federated import flower_launch

    # 2be5b0a8 writes the result-dir as UTF-8 text (it was ASCII escapes); reading the file with
    # the locale's encoding turned 'é' into 'Ã©' where that is cp1252 (Windows): the run looked
    # for its result, and deleted the stale one, in a folder that is not the app's result-dir
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "cp1252")
    for name in ("résultats", "r\U0001f600"):
        result = tmp_path / name
        app = flower_launch.write_flower_app(tmp_path / "app", n_silos=2, result_dir=result)
        assert flower_launch._result_dir(app.app_dir) == result.resolve()
