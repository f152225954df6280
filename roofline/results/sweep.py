"""Result type of ``roofline sweep`` and of ``roofline.sweep(...)``: a table of numpy columns.

Columns (SI units, the unit in each name): ``model``, ``cpu``, ``precision``, ``phase``, ``batch``,
``seq_len``, ``context`` (decode only, else missing), ``m`` (GEMM rows: tokens per step), ``gemm_time_s``,
``step_time_s``, ``throughput_per_s`` (sequences per second of the whole platform), ``aggregate_ops_per_s``,
``bound``, ``weight_bytes`` (weights read per step), ``llc_resident``, ``joules_per_sample`` and
``joules_per_token`` (a busy server's sockets x TDP + --server-overhead-w over the sequences, or the tokens
(``m`` per step), per second; missing where the platform file gives no TDP).

The table is lazy: the grid is evaluated block by block (:meth:`SweepTable.blocks`) when it is written or
converted, so a sweep of 1e8 points streams to a file in the memory of one block; ``to_pandas``,
``to_arrow`` and the columns by name hold the whole table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from roofline.errors import UserError
from roofline.files.columns import Block, Schema, column_values

SCHEMA = Schema((
    ("model", "text"), ("cpu", "text"), ("precision", "text"), ("phase", "text"), ("batch", "int"),
    ("seq_len", "int"), ("context", "int"), ("m", "int"), ("gemm_time_s", "float"), ("step_time_s", "float"),
    ("throughput_per_s", "float"), ("aggregate_ops_per_s", "float"), ("bound", "text"), ("weight_bytes", "float"),
    ("llc_resident", "bool"), ("joules_per_sample", "float"), ("joules_per_token", "float"),
))
COLUMNS = SCHEMA.names


class SweepTable:
    """A sweep's points as columns: ``len(table)`` points, ``table["step_time_s"]`` a numpy column,
    :meth:`to_pandas`, :meth:`to_arrow`, :meth:`write` (CSV, JSON lines, Parquet), :meth:`blocks` to stream."""

    schema = SCHEMA

    def __init__(self, blocks: Callable[[], Iterator[Block]], points: int, grid: str = "") -> None:
        self._blocks = blocks
        self.points = points
        self.grid = grid
        """the grid, in words (``2 models x 1 CPU x ...``)"""
        self._columns: dict[str, np.ndarray] | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        return COLUMNS

    def __len__(self) -> int:
        return self.points

    def __repr__(self) -> str:
        return f"SweepTable({self.points:,} points: {self.grid})" if self.grid else f"SweepTable({self.points:,} points)"

    def blocks(self) -> Iterator[Block]:
        """The points block by block (each evaluated when it is reached: bounded memory)."""
        return self._blocks()

    def to_numpy(self) -> dict[str, np.ndarray]:
        """Every column as one numpy array (text as objects; a missing context as NaN), evaluated once."""
        if self._columns is None:
            parts: dict[str, list[np.ndarray]] = {name: [] for name in COLUMNS}
            for block in self.blocks():
                for name, kind in SCHEMA.columns:
                    parts[name].append(column_values(block.columns[name], block.length, kind))
            self._columns = {name: (np.concatenate(p) if p else np.empty(0)) for name, p in parts.items()}
        return self._columns

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in COLUMNS:
            raise KeyError(f"{name!r}: the columns are {', '.join(COLUMNS)}")
        return self.to_numpy()[name]

    def to_pandas(self):
        """A pandas DataFrame with the CSV's columns and values."""
        try:
            import pandas as pd
        except ImportError:
            raise UserError("SweepTable.to_pandas needs pandas: pip install pandas") from None
        return pd.DataFrame(self.to_numpy(), columns=list(COLUMNS))

    def to_arrow(self):
        """A pyarrow Table with the Parquet file's columns and types."""
        import pyarrow as pa

        from roofline.files.columns import arrow_batch, arrow_schema

        return pa.Table.from_batches([arrow_batch(SCHEMA, b) for b in self.blocks() if b.length],
                                     schema=arrow_schema(SCHEMA))

    def write(self, path: str, format: str | None = None, *, force: bool = False) -> str:
        """Write the table to ``path`` (``.csv``, ``.jsonl``, ``.parquet``; ``format`` overrides the suffix), whole
        or not at all; returns the format written."""
        from roofline.files.columns import table_format, write_table

        fmt = table_format(str(path), format, "path")
        write_table(str(path), SCHEMA, self.blocks(), fmt, force=force)
        return fmt
