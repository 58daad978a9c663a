"""The one shape of every trustlab result: ``to_dict()``, ``summary()``, ``plot()`` and files.

Every one-shot computation returns a frozen dataclass that derives from :class:`Result`:

- ``to_dict()`` is built from the dataclass fields (minus those declared with
  :func:`internal_field`) plus the properties named in ``_dict_extras``, and converted by the one
  JSON converter, :func:`to_jsonable` (numpy to Python, NaN and infinity to ``None``);
- ``summary()`` is a short text for people (every result overrides the generic one);
- ``plot(ax=None)`` draws the result on a matplotlib Axes where a picture helps (not every result
  has one: :func:`has_plot` tells);
- ``files()`` names any further files a result is saved as (tables, arrays, more pictures);
- ``write(out_dir)`` saves it all.

:func:`write_outputs` saves any result the same way: ``result.json``, the picture at one
resolution and the extra files, each written atomically. The CLI's ``--out`` goes through it.

>>> from dataclasses import dataclass
>>> import numpy as np
>>> @dataclass(frozen=True)
... class Mean(Result):
...     value: float
...     samples: np.ndarray = internal_field()
...     _dict_extras = ("n",)
...     @property
...     def n(self):
...         return len(self.samples)
>>> Mean(np.float64(2.5), np.arange(4)).to_dict()
{'value': 2.5, 'n': 4}
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from trustlab.errors import InputError

__all__ = [
    "FIGURE_DPI",
    "Result",
    "internal_field",
    "to_jsonable",
    "has_plot",
    "new_axes",
    "write_outputs",
    "write_atomic",
    "replace_saved",
    "save_png",
    "write_png",
    "output_dir",
    "json_text",
    "saved_mapping",
]

#: The one resolution of every saved picture (report, CLI files).
FIGURE_DPI = 144

_IN_DICT = "trustlab_in_dict"


def saved_mapping(value: Any, name: str, kind: str) -> Mapping[str, Any]:
    """``value`` when it is a mapping (what ``<kind>.to_dict()`` wrote, read back by
    ``from_dict``); anything else is an InputError naming ``name`` (it was a raw AttributeError
    or TypeError from the first key looked up)."""
    if not isinstance(value, Mapping):
        raise InputError.bad(name, f"a mapping written by {kind}.to_dict()", value)
    return value


def internal_field(**kwargs: Any) -> Any:
    """A dataclass field kept out of ``to_dict()`` and ``repr`` (large arrays, live objects)."""
    metadata = {**kwargs.pop("metadata", {}), _IN_DICT: False}
    kwargs.setdefault("repr", False)
    kwargs.setdefault("compare", False)
    return dataclasses.field(metadata=metadata, **kwargs)


class Result:
    """Base of every trustlab result (a mixin for frozen dataclasses).

    Subclasses list derived values for ``to_dict()`` in ``_dict_extras`` (property names) and
    may override :meth:`_dict_items` when the JSON shape is not the fields' shape; everything still
    goes through :func:`to_jsonable`. ``figure_name`` is the file :func:`write_outputs` saves
    ``plot()`` as and ``figure_size`` its size in inches.
    """

    _dict_extras: ClassVar[tuple[str, ...]] = ()
    figure_name: ClassVar[str] = "result.png"
    figure_size: ClassVar[tuple[float, float]] = (7.0, 4.5)

    def _dict_items(self) -> dict[str, Any]:
        """The values of ``to_dict()`` before conversion: fields, then ``_dict_extras``."""
        items: dict[str, Any] = {}
        if dataclasses.is_dataclass(self):
            for f in dataclasses.fields(self):
                if f.metadata.get(_IN_DICT, True):
                    items[f.name] = getattr(self, f.name)
        for name in self._dict_extras:
            items[name] = getattr(self, name)
        return items

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-safe Python values (what ``--json`` prints and ``result.json`` holds)."""
        return to_jsonable(self._dict_items(), type(self).__name__)

    def summary(self) -> str:
        """A short text for people: the scalar values of ``to_dict()``."""
        lines = [type(self).__name__]
        for key, value in self.to_dict().items():
            if isinstance(value, (int, float, str, bool)) or value is None:
                lines.append(f"  {key}: {value}")
        return "\n".join(lines)

    def files(self) -> Mapping[str, Any]:
        """Further files to save: name -> DataFrame (CSV), ndarray (.npy), str, dict/list (JSON),
        or a drawing function ``draw(ax)`` (PNG). None by default."""
        return {}

    def write(self, out_dir: str | os.PathLike) -> list[Path]:
        """Save the result into ``out_dir`` (created if needed) as :func:`write_outputs` does:
        ``result.json``, the picture and :meth:`files`; return the paths written."""
        return write_outputs(self, out_dir)

    def __str__(self) -> str:
        return self.summary()


def has_plot(result: Any) -> bool:
    """Whether ``result`` draws itself (has a callable ``plot``)."""
    return callable(getattr(result, "plot", None))


def new_axes(ax: Any = None, figsize: tuple[float, float] = (6.4, 4.2)) -> Any:
    """``ax`` itself, or the axes of a new pyplot figure (shown in notebooks) when it is None."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


# --------------------------------------------------------------------------- JSON


def to_jsonable(value: Any, name: str = "value") -> Any:
    """Convert numpy and pandas values to plain JSON values; NaN and infinity become None,
    dates, times and durations ISO 8601 texts (numpy's too; a missing one None), bytes (labels
    or groups read as numpy ``S`` values) UTF-8 text, a byte that is not UTF-8 as ``\\xNN``.

    numpy arrays and pandas Series, Index and Categorical values become lists of their values (a
    Series' index is dropped, as ``Series.tolist()`` does; pass ``series.to_dict()`` to keep it).
    Other objects with a ``to_dict()`` method (a DataFrame) are converted through it, other
    dataclasses through their fields (minus :func:`internal_field` ones), an Enum member as its
    value. Mapping keys become texts; two keys that would become one text (``1`` and ``"1"``)
    raise. Anything else that JSON cannot hold raises :class:`InputError` naming where it was
    found. A date or time key is the ISO 8601 text its value would be (a missing one ``"None"``).
    """
    if isinstance(value, enum.Enum):  # its value (a str or int Enum is a str or int too)
        return to_jsonable(value.value, name)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)  # numpy's str_ as a plain str
    if isinstance(value, bytes):  # numpy's bytes_ too
        return _text(value)
    if type(value).__name__ in ("NAType", "NaTType"):  # pandas' missing values
        return None
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return _mapping(value, name)
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v, f"{name}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if _is_numpy_time(value):  # tolist() gives nanoseconds as ints for [ns] values
        return _numpy_times(value)
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # numpy arrays and scalars
        items = value.tolist()
        if type(items) is type(value):  # a long double: tolist() gives itself back
            if value.dtype.kind != "f":
                raise InputError.bad(name, "JSON-safe values (real numbers)", value)
            items = float(value)
        return to_jsonable(items, name)
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return to_jsonable(value.to_dict(), name)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # its fields, by name
        fields = dataclasses.fields(value)
        items = {f.name: getattr(value, f.name) for f in fields if f.metadata.get(_IN_DICT, True)}
        return to_jsonable(items, name)
    if hasattr(value, "isoformat"):  # dates and times
        return value.isoformat()
    if isinstance(value, datetime.timedelta):  # as pandas' Timedelta says it: ISO 8601
        import pandas as pd

        return pd.Timedelta(value).isoformat()
    raise InputError.bad(name, "JSON-safe values (numbers, strings, lists, dicts)", value)


def _is_numpy_time(value: Any) -> bool:
    import sys

    np = sys.modules.get("numpy")  # a numpy value means numpy is imported already
    if np is None or not isinstance(value, (np.ndarray, np.generic)):
        return False
    return value.dtype.kind in "mM"


def _numpy_times(value: Any) -> Any:
    """numpy datetime64 / timedelta64 values as ISO 8601 texts (NaT as None), in their shape."""
    import numpy as np
    import pandas as pd

    if value.dtype.kind == "M":
        texts = np.datetime_as_string(value)
    else:
        texts = np.vectorize(lambda t: pd.Timedelta(t).isoformat(), otypes=[object])(value)
    plain = np.vectorize(lambda t: None if t == "NaT" else str(t), otypes=[object])
    return plain(texts).tolist()


def _mapping(value: Mapping, name: str) -> dict[str, Any]:
    """A mapping with text keys; two keys that read as one (``1`` and ``"1"``) are refused
    rather than one silently replacing the other."""
    out: dict[str, Any] = {}
    for k, v in value.items():
        key = _key(k, name)
        if key in out:
            raise InputError(
                f"{name}: expected keys that stay distinct as JSON text, got two keys written "
                f"{key!r}",
                argument=name,
            )
        out[key] = to_jsonable(v, f"{name}[{k!r}]")
    return out


def _key(key: Any, name: str) -> str:
    if isinstance(key, enum.Enum):
        key = key.value
    if _is_numpy_time(key) or hasattr(key, "isoformat") or isinstance(key, datetime.timedelta):
        # as the value would be written (ISO 8601): item() gave a [ns] time as an int
        key = to_jsonable(key, name)
    if isinstance(key, str):
        return str(key)
    if isinstance(key, bytes):
        return _text(key)
    if hasattr(key, "item"):
        key = key.item()
    if getattr(key, "dtype", None) is not None and key.dtype.kind == "f":
        key = float(key)  # a long double: item() gives itself back
    if isinstance(key, (int, float, bool)) or key is None:
        return str(key)
    if isinstance(key, tuple):  # a pair of features, classes ...
        return " x ".join(str(_key(k, name)) for k in key)
    raise InputError.bad(f"{name} keys", "strings or numbers", key)


def _text(value: bytes) -> str:
    return bytes(value).decode("utf-8", errors="backslashreplace")


def json_text(value: Any) -> str:
    """``value`` as indented JSON text (through :func:`to_jsonable`; never NaN)."""
    return json.dumps(to_jsonable(value), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# --------------------------------------------------------------------------- files


def write_atomic(path: str | os.PathLike, data: str | bytes | Callable[[Path], Any]) -> Path:
    """Write ``data`` to ``path`` through a file beside it and a rename: never half a file.

    ``data`` is text, bytes, or a function that writes the temporary path it is given. A
    ``path`` that is a symbolic link writes the file it points to, as ``open()`` and ``cp`` do
    (the link stays); a link into a folder that does not exist is replaced by the file, as
    nothing there could be updated (the output is kept, not lost after the work). The path as
    given is returned.
    """
    path = Path(path)
    target = _link_target(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent)
    try:
        if callable(data):
            os.close(fd)
            data(Path(tmp))
        else:
            mode = "wb" if isinstance(data, bytes) else "w"
            encoding = None if isinstance(data, bytes) else "utf-8"
            with os.fdopen(fd, mode, encoding=encoding) as fh:
                fh.write(data)
        # mkstemp makes the file private; give it the mode a plain open() would (0644 under the
        # usual umask 022; a user's umask 077 kept weights 0600 before they were written so)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def replace_saved(
    folder: str | os.PathLike,
    arrays: Mapping[str, str | bytes | Callable[[Path], Any]],
    descriptions: Mapping[str, str | bytes],
) -> list[Path]:
    """Write a saved model (its array files, then the description files that make ``folder`` a
    model) over an earlier one, so that the folder is the earlier model or none at any moment.

    ``arrays`` and ``descriptions`` map file names to what :func:`write_atomic` writes. In turn:

    1. each array file is written whole aside, as ``.<name>.new``: stopped there (Ctrl-C, a
       full disk), the earlier model is as it was;
    2. the earlier description files are removed (the last written first);
    3. the staged array files are renamed into place;
    4. the description files are written, in the order given.

    Stopped between 2 and 4, the folder holds no (whole) description, so nothing loads: never
    new arrays under the earlier description. The paths written are returned, arrays first. A
    file (array or description) that is a symbolic link is written where it points, as
    :func:`write_atomic` does: the link stays.
    """
    folder = Path(folder)
    staged: dict[Path, Path] = {}  # staged file -> where it goes
    try:
        for name, data in arrays.items():
            target = _link_target(folder / name)
            # beside the file it replaces: the rename stays on one file system
            staged[write_atomic(target.parent / f".{target.name}.new", data)] = target
        for name in reversed(list(descriptions)):
            # a linked description's file goes, not the link: step 4 writes through it
            _link_target(folder / name).unlink(missing_ok=True)
        for path, target in list(staged.items()):
            os.replace(path, target)
            del staged[path]
    except BaseException:
        for path in staged:  # never renamed: no stray copies of the new arrays
            path.unlink(missing_ok=True)
        raise
    written = [folder / name for name in arrays]
    for name, text in descriptions.items():
        written.append(write_atomic(folder / name, text))
    return written


def _link_target(path: Path) -> Path:
    """Where writing ``path`` goes: the file a symbolic link points to (also through a chain of
    links), or ``path`` itself where that lies in no existing folder (nothing there to update)."""
    target = Path(os.path.realpath(path))
    return target if target.parent.is_dir() else path


def _umask() -> int:
    """The process's umask, read without changing it where Linux shows it (setting it to read it
    back would, for that moment, let another thread create a file open to all)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def output_dir(out_dir: str | os.PathLike, name: str = "out_dir") -> Path:
    """``out_dir`` as a Path, created if needed (an InputError naming ``name`` if it cannot be, or
    if it is empty: ``Path("")`` is the working directory, which nobody means by an empty name)."""
    out = _non_empty_path(out_dir, name)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError.bad(name, "a directory that can be created", str(out)) from exc
    return out


def check_output_dir(out_dir: str | os.PathLike, name: str = "out_dir") -> Path:
    """``out_dir`` as a Path if it is a folder or could be made one, without making it: an
    InputError naming ``name`` before any work where it, or a folder above it, is a file, or where
    it is empty."""
    out = _non_empty_path(out_dir, name)
    for path in (out, *out.parents):
        if path.exists():
            if not path.is_dir():
                raise InputError.bad(name, "a directory that can be created", str(out))
            break
    return out


def _non_empty_path(out_dir: str | os.PathLike, name: str) -> Path:
    if isinstance(out_dir, str) and not out_dir.strip():
        raise InputError.bad(name, "a folder path (use '.' for the working directory)", out_dir)
    return Path(out_dir)


def write_outputs(result: Any, out_dir: str | os.PathLike) -> list[Path]:
    """Save a result: ``result.json``, its picture and its further files; return the paths.

    ``result.json`` holds ``to_dict()``; ``plot()`` is saved as ``result.figure_name`` (PNG at
    :data:`FIGURE_DPI`); ``result.files()`` adds tables (CSV), arrays (.npy), texts, JSON values
    and further pictures. An overwrite goes through :func:`replace_saved`: every new file is
    written whole aside first (stopped there, the earlier result's files are as they were), then
    the earlier ``result.json`` is removed, the new files renamed into place and ``result.json``
    written last: a folder that holds one holds one whole result, even if the process was
    stopped while saving.
    """
    out = output_dir(out_dir, "out")
    summary = json_text(result.to_dict())
    size = getattr(result, "figure_size", (7.0, 4.5))
    files: dict[str, str | bytes | Callable[[Path], Any]] = {}
    if has_plot(result):
        files[result.figure_name] = _figure_writer(result.plot, size)
    extra = result.files() if callable(getattr(result, "files", None)) else {}
    for name, content in extra.items():
        files[name] = _file_writer(content, size)
    written = replace_saved(out, files, {"result.json": summary})
    return [written[-1], *written[:-1]]


def _file_writer(content: Any, size: tuple[float, float]) -> str | bytes | Callable[[Path], Any]:
    """What :func:`write_atomic` writes for ``content``: text, bytes, or a function that writes
    the temporary path it is given."""
    import numpy as np

    if hasattr(content, "to_csv"):
        return lambda tmp: content.to_csv(tmp, index=False)
    if isinstance(content, np.ndarray):
        return lambda tmp: _save_npy(tmp, content)
    if isinstance(content, (str, bytes)):
        return content
    if callable(content):
        return _figure_writer(content, size)
    return json_text(content)


def _figure_writer(draw: Callable[..., Any], size: tuple[float, float]) -> Callable[[Path], Any]:
    def write(tmp: Path) -> None:
        from matplotlib.figure import Figure

        figure = Figure(figsize=size)  # not registered with pyplot: nothing to close, nothing leaks
        draw(ax=figure.add_subplot())
        save_png(figure, tmp)

    return write


def _save_npy(path: Path, array: Any) -> None:
    import numpy as np

    with open(path, "wb") as fh:  # a file object: np.save would append .npy to a bare name
        np.save(fh, array, allow_pickle=False)


def write_png(path: Path, figure: Any) -> Path:
    """Save a matplotlib figure as a PNG at :data:`FIGURE_DPI`, atomically, every text drawn as
    written (see :func:`save_png`)."""
    return write_atomic(path, lambda tmp: save_png(figure, tmp))


def save_png(figure: Any, target: Any) -> None:
    """Save ``figure`` as PNG at :data:`FIGURE_DPI` to a path or binary file, with every text
    drawn as written: names from the data (a group '$10k-$50k') are not matplotlib mathtext
    (that one was drawn as an italic '10k-50k', and a name that is not valid mathtext failed the
    whole figure). Texts made before saving are switched off one by one; tick labels made while
    drawing follow the rc setting."""
    import matplotlib
    from matplotlib.text import Text

    for text in figure.findobj(Text):
        text.set_parse_math(False)
    with matplotlib.rc_context({"text.parse_math": False}):
        figure.savefig(target, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
