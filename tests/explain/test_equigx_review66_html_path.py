"""``GraphExplanation.to_html`` names a path it cannot write and writes the page whole (review 66).

Measured before: ``to_html(folder)`` raised a bare ``IsADirectoryError: [Errno 21] Is a
directory`` (``to_html("")`` the same for '.'), a path under a file ``FileExistsError: [Errno
17] File exists``, ``to_html(None)`` a ``TypeError``, all after the figure was built; and the page
was written in place (plotly's ``Path.write_text``), so a write cut short (a full disk, Ctrl-C)
left the start of a page where an earlier view had been (the CLI's ``explain --out`` refuses a folder with
``equigx.html`` as already done). Now an InputError naming ``path`` before the figure is built,
and the page goes through the atomic write: an interrupted write leaves the earlier page whole.
A good path writes the same self-contained page as before (test_equigx_evaluation's view test).
"""

from __future__ import annotations

import pytest

pytest.importorskip("e3nn")
pytest.importorskip("plotly")
torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402


@pytest.fixture(scope="module")
def explanation(tmp_path_factory):
    from trustlab.explain.equigx import EquiGX, TensorFieldNetwork, shapes_in_noise

    torch.manual_seed(0)
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    graph = shapes_in_noise(1, variant="same_count", n_nodes=8, random_state=0)[0]
    ex = EquiGX(net).explain(graph, target=0)
    # one page drawn here, with the shared network: plotly builds its figure classes on first use
    # (0.9-1.3 s on a loaded 2-core machine), which the interrupted write paid in its own call
    # (1.3-2.3 s there; 0.15-0.3 s once plotly is warm; review 66 N)
    assert ex.to_html(tmp_path_factory.mktemp("warm") / "view.html").stat().st_size > 10**6
    return ex


def test_a_path_that_cannot_be_written_is_named(explanation, tmp_path):
    (tmp_path / "file").write_text("x")
    for path in (tmp_path, "", None, 5, tmp_path / "file" / "view.html"):
        with pytest.raises(InputError) as info:
            explanation.to_html(path)
        assert info.value.argument == "path", path
    assert (tmp_path / "file").read_text() == "x"


def test_an_interrupted_write_leaves_the_earlier_page(explanation, tmp_path):
    resource = pytest.importorskip("resource")
    import signal

    page = tmp_path / "view.html"
    before = "<html><body>the earlier view</body></html>\n"
    page.write_text(before)
    # a disk that takes no more than 4 kB per file (the page is megabytes: plotly inlined), by
    # whatever call writes it; the signal ignored, the write raises EFBIG as a full disk would
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, limits[1]))
    try:
        with pytest.raises(OSError):
            explanation.to_html(page)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)
    assert page.read_text() == before  # was: the page's first 4 kB
    assert [p.name for p in tmp_path.iterdir()] == ["view.html"]
