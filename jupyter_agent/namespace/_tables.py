"""Summaries of pandas, numpy and polars values for :mod:`jupyter_agent.namespace.kernel_namespace`.

Each summariser gets a value whose class is the library's own (checked by
:func:`~jupyter_agent.namespace._values.family_of`) and that class; it reads the value
through the class's descriptors and methods and the library's functions, never through
code of the user's. Invariants kept here:

- Costly statistics (null counts, ``describe()``, min/max) are skipped above
  :data:`STATS_CELL_LIMIT` cells.
- Cells, labels and elements that are Python objects become :func:`safe_repr` text in our
  own small copy before pandas formats them; the user's frame is never changed.
- Columns named like secrets, and cells beside a secret's name, are masked.
- A pandas value that holds an array of a type defined elsewhere (a user's ExtensionArray,
  found by :func:`foreign_arrays`) is not summarised: pandas would call its code.
- The libraries are never imported here: they are found in ``sys.modules``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from ..secrets.shapes import MASK, is_secret_name
from ._values import (
    DATA_LIBRARIES,
    ITEMS_SHOWN,
    LIBRARIES,
    header,
    label_text,
    safe_repr,
    type_name,
)
from .static import genuine, instance_dict, name_of, str_get

STATS_CELL_LIMIT = 5_000_000
"""Most cells (rows × columns, or array elements) for which statistics are computed."""
COLUMNS_SHOWN = 40


def foreign_arrays(value: Any, kind: str) -> str:
    """The type of an array a pandas object holds that is not pandas' or numpy's own (a
    user's ExtensionArray, whose methods pandas would call); "" when there is none."""
    if not kind.startswith("pandas."):
        return ""
    attributes = instance_dict(value) or {}
    if kind == "pandas.Index":
        arrays = [str_get(attributes, "_data")]
    else:
        manager = str_get(attributes, "_mgr")
        if manager is None or not genuine(type(manager), DATA_LIBRARIES):
            return "an unknown storage"
        arrays = [block.values for block in manager.blocks]
    for array in arrays:
        if array is not None and not genuine(type(array), DATA_LIBRARIES):
            return f"a {type_name(array)}"
    return ""


def _secret_columns(columns: Iterable[Any]) -> list[Any]:
    return [c for c in columns if type(c) is str and is_secret_name(c)]


_PLAIN_CELLS = frozenset({str, int, float, bool, complex, bytes, type(None)})


def _object_nulls(values: list[Any], missing: tuple[Any, ...]) -> int | None:
    """Null cells of an object column, counted without calling any cell's code; None when
    a cell is an object of another kind (pandas' own check would ask it)."""
    nulls = 0
    for v in values:
        t = type(v)
        if v is None or any(v is m for m in missing) or (t is float and v != v):
            nulls += 1
        elif t not in _PLAIN_CELLS and not genuine(t, LIBRARIES):
            return None
    return nulls


def _plain_cells(frame: Any, columns: list[Any], dtypes: Any) -> None:
    """Turn the object cells and labels of ``frame`` (our own small copy) into text made
    without user code, so that pandas' formatting calls no ``__str__`` or ``__repr__``."""
    for i in range(len(columns)):
        if getattr(dtypes.iloc[i], "kind", "") == "O":
            cells = list(frame.iloc[:, i])
            frame.isetitem(i, [v if type(v) is str else safe_repr(v, 40) for v in cells])
    frame.columns = [label_text(c) for c in columns]
    frame.index = [label_text(i) for i in list(frame.index)]


def pandas_frame(name: str, df: Any, klass: Any) -> str:
    rows, cols = klass.shape.__get__(df)
    out = [header(name, df, f"{rows:,} rows × {cols:,} columns")]
    columns = list(klass.columns.__get__(df))
    dtypes = klass.dtypes.__get__(df)
    cells = rows * max(cols, 1)
    nulls: list[int | None] | None = None
    if cells <= STATS_CELL_LIMIT:
        objects = [getattr(dtypes.iloc[i], "kind", "") == "O" for i in range(cols)]
        typed = [i for i in range(cols) if not objects[i]]
        counts = iter(klass.isna(df.iloc[:, typed]).sum().tolist())  # in column order
        missing = _pandas_missing()
        nulls = [
            _object_nulls(list(df.iloc[:, i]), missing) if objects[i] else int(next(counts))
            for i in range(cols)
        ]
    out.append("Columns (dtype, nulls):" if nulls is not None else "Columns (dtype):")
    for i, col in enumerate(columns[:COLUMNS_SHOWN]):
        detail = str(dtypes.iloc[i])
        if nulls is not None:
            n = nulls[i]
            detail += f", {n:,} null" if n is not None else ", holds Python objects"
        out.append(f"  {label_text(col)} ({detail})")
    if len(columns) > COLUMNS_SHOWN:
        out.append(f"  … {len(columns) - COLUMNS_SHOWN} more columns")
    if nulls is None:
        out.append(f"  (null counts skipped: {cells:,} cells)")
    head = klass.head(df, 5).copy()  # our own copy: the user's frame is untouched
    _plain_cells(head, columns, dtypes)
    hidden = _secret_columns(columns)
    for col in hidden:
        head[col] = MASK
    beside = _mask_beside_secret_names(head)
    out.append("Head (5 rows):")
    out.append(head.to_string(max_cols=20, max_colwidth=40, show_dimensions=False, line_width=120))
    if hidden:
        out.append(f"(values of {', '.join(map(str, hidden))} masked: the names say secret)")
    if beside:
        out.append(f"({beside} value(s) masked: a cell beside them names a secret)")
    numeric = [i for i in range(cols) if getattr(dtypes.iloc[i], "kind", "") in "biuf"]
    numeric = [i for i in numeric if columns[i] not in hidden]
    if numeric and cells <= STATS_CELL_LIMIT:
        described = klass.describe(df.iloc[:, numeric[:20]].copy())
        _plain_cells(described, list(described.columns), described.dtypes)
        out.append(
            "describe() of numeric columns" + (" (first 20)" if len(numeric) > 20 else "") + ":"
        )
        out.append(described.to_string(max_cols=20, line_width=120))
    elif numeric:
        out.append(f"describe() skipped: {cells:,} cells is more than the quick limit.")
    return "\n".join(out)


def _pandas_missing() -> tuple[Any, ...]:
    pandas = sys.modules.get("pandas")
    return tuple(getattr(pandas, n) for n in ("NA", "NaT")) if pandas is not None else ()


def _mask_beside_secret_names(head: Any) -> int:
    """In a name/value table (``name="password", value="hunter2"``), mask the text cells of
    each row that holds a secret's name; returns how many were masked."""
    masked = 0
    rows, cols = head.shape
    for r in range(rows):
        cells = [head.iat[r, c] for c in range(cols)]
        if not any(type(v) is str and is_secret_name(v) for v in cells):
            continue
        for c, v in enumerate(cells):
            if type(v) is str and not is_secret_name(v) and v != MASK:
                head.iat[r, c] = MASK
                masked += 1
    return masked


def pandas_series(name: str, s: Any, klass: Any) -> str:
    n = klass.shape.__get__(s)[0]
    dtype = klass.dtype.__get__(s)
    label = klass.name.__get__(s)
    objects = getattr(dtype, "kind", "") == "O"
    out = [header(name, s, f"{n:,} values, dtype {dtype}, name {safe_repr(label, 60)}")]
    if n <= STATS_CELL_LIMIT:
        nulls = _object_nulls(list(s), _pandas_missing()) if objects else int(klass.isna(s).sum())
        out.append(f"Nulls: {nulls:,}" if nulls is not None else "Nulls: (holds Python objects)")
    if type(label) is str and is_secret_name(label):
        out.append("Values masked: the series' name says it holds secrets.")
        return "\n".join(out)
    head = klass.head(s, 5).to_frame("value")
    _plain_cells(head, ["value"], head.dtypes)
    out.append("Head (5):")
    out.append(head["value"].to_string(max_rows=5))
    if getattr(dtype, "kind", "") in "biuf" and n <= STATS_CELL_LIMIT:
        out.append("describe():")
        out.append(klass.describe(s).to_string())
    return "\n".join(out)


def pandas_index(name: str, index: Any, klass: Any) -> str:
    n = klass.shape.__get__(index)[0]
    out = [header(name, index, f"{n:,} entries, dtype {klass.dtype.__get__(index)}")]
    out.append("First entries: " + safe_repr(list(index[:ITEMS_SHOWN]), 600))
    return "\n".join(out)


def numpy_array(name: str, a: Any, klass: Any) -> str:
    shape = tuple(klass.shape.__get__(a))
    dtype = klass.dtype.__get__(a)
    size = int(klass.size.__get__(a))
    out = [header(name, a, f"shape {shape}, dtype {dtype}, {size:,} elements")]
    np = sys.modules.get("numpy")
    kind = getattr(dtype, "kind", "")
    if np is not None and kind in "biuf" and 0 < size <= STATS_CELL_LIMIT:
        if kind == "f":
            nans = int(np.isnan(a).sum())
            stats = (np.nanmin(a), np.nanmax(a), np.nanmean(a)) if nans < size else None
            if nans:
                out.append(f"NaN: {nans:,}")
        else:
            stats = (a.min(), a.max(), a.mean())
        if stats is not None:
            lo, hi, mean = stats
            out.append(f"min {lo!s}, max {hi!s}, mean {float(mean):.6g}")
    elif size > STATS_CELL_LIMIT and kind in "biuf":
        out.append(f"(statistics skipped: {size:,} elements)")
    if np is not None and not dtype.hasobject:
        out.append("Preview:")
        out.append(np.array2string(a, threshold=50, edgeitems=3, max_line_width=100))
    elif size:  # Python objects inside: shown without their own code
        first = [safe_repr(x, 60) for x in a.ravel()[:10].tolist()]
        out.append("First elements (Python objects): " + ", ".join(first))
    return "\n".join(out)


def polars_frame(name: str, df: Any, klass: Any) -> str:
    rows, cols = klass.shape.__get__(df)
    out = [header(name, df, f"{rows:,} rows × {cols:,} columns")]
    schema = klass.schema.__get__(df)
    out.append("Schema:")
    items = list(schema.items())
    for col, dtype in items[:COLUMNS_SHOWN]:
        out.append(f"  {col} ({dtype})")
    if len(items) > COLUMNS_SHOWN:
        out.append(f"  … {len(items) - COLUMNS_SHOWN} more columns")
    objects = [col for col, dtype in items if _polars_objects(dtype)]
    hidden = _secret_columns(schema)
    shown = klass.drop(df, objects) if objects else df
    head = klass.head(shown, 5)
    if hidden:
        lit = sys.modules["polars"].lit
        head = head.with_columns(*[lit(MASK).alias(c) for c in hidden])
    out.append("Head (5 rows):")
    out.append(str(head))
    if objects:
        out.append(f"(columns of Python objects not shown: {', '.join(objects)})")
    if rows * max(cols, 1) <= STATS_CELL_LIMIT:
        out.append("describe():")
        out.append(str(klass.describe(shown.drop(hidden) if hidden else shown)))
    else:
        out.append(f"describe() skipped: {rows * cols:,} cells")
    return "\n".join(out)


def _polars_objects(dtype: Any) -> bool:
    """Whether a polars column holds Python objects (formatting them calls their code)."""
    return name_of(type(dtype)) == "Object" or dtype is sys.modules["polars"].Object


def polars_series(name: str, s: Any, klass: Any) -> str:
    n = klass.len(s)
    label = klass.name.__get__(s)
    dtype = klass.dtype.__get__(s)
    out = [header(name, s, f"{n:,} values, dtype {dtype}, name {label!r}")]
    out.append(f"Nulls: {klass.null_count(s):,}")
    if type(label) is str and is_secret_name(label):
        out.append("Values masked: the series' name says it holds secrets.")
        return "\n".join(out)
    if _polars_objects(dtype):
        out.append("(values are Python objects: not shown)")
        return "\n".join(out)
    out.append("Head (5):")
    out.append(str(klass.head(s, 5)))
    return "\n".join(out)
