"""A recording's files: read (gzip or plain, checked), and a CSV file's rows scanned into
columns by its header (`scan_tables`)."""

from __future__ import annotations

import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tradearena.envs.data import text
from tradearena.envs.data.text import ScanError
from tradearena.envs.errors import UserError

__all__ = ["FeedError", "Source", "Table", "read_sources", "scan_tables", "table_column"]


class FeedError(UserError):
    """A recording that cannot be read; the message names the file, the line and what is
    wrong."""


@dataclass(frozen=True, eq=False)
class Source:
    """One file of a recording: its ``path``, its text (``data``, decompressed) and the byte
    where its rows start (``start``, after a CSV header; its line is ``first_line``)."""

    path: str
    data: bytes
    start: int = 0
    first_line: int = 1

    def where(self, row: int, column: str | None = None) -> str:
        """'path, line N[, column NAME]' of ``row`` (0-based, counted from ``start``)."""
        place = f"{self.path}, line {self.first_line + row}"
        return f"{place}, column {column}" if column else place

    def error(self, error: ScanError, columns: Sequence[str] = ()) -> FeedError:
        name = columns[error.column] if 0 <= error.column < len(columns) else None
        return FeedError(f"{self.where(error.row, name)}: {error.reason}")


def read_sources(paths: Sequence[str | os.PathLike], header: bool = False) -> list[Source]:
    """The files of a recording, gzip (by its magic bytes) or plain; with ``header``, a CSV's
    first line is its header (``Source.start`` after it). An unreadable, truncated or empty
    file is a `FeedError` naming it."""
    if not paths:
        raise FeedError("no input files given")
    sources = []
    for path in map(os.fspath, paths):
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError as exc:
            raise FeedError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
        if data[:2] == b"\x1f\x8b":
            data = _gunzip(data, path)
        if not data.strip():
            raise FeedError(f"{path}: the recording is empty")
        start = data.find(b"\n") + 1 if header else 0
        if header and start == 0:
            start = len(data)
        sources.append(Source(path, data, start, 2 if header else 1))
    return sources


def _gunzip(data: bytes, path: str) -> bytes:
    """The text of gzip ``data`` (every member of it, each checked against its CRC)."""
    parts = []
    while data:
        unzip = zlib.decompressobj(wbits=31)
        try:
            parts.append(unzip.decompress(data))
        except zlib.error as exc:
            raise FeedError(f"{path}: not a readable gzip file ({exc})") from exc
        if not unzip.eof:
            raise FeedError(
                f"{path}: truncated gzip (the compressed data ends before its end marker)"
            )
        data = unzip.unused_data
    return b"".join(parts)


@dataclass(frozen=True)
class Table:
    """One kind of CSV file of a recording: ``columns`` it must have, name -> a
    `envs.data.text` CSV kind, or (CSV_ENUM, allowed words); other columns are skipped."""

    name: str
    columns: dict[str, int | tuple[int, tuple[bytes, ...]]]

    def matches(self, header: list[str]) -> bool:
        return set(self.columns) <= set(header)


def scan_tables(
    paths: Sequence[str | os.PathLike], tables: Sequence[Table]
) -> tuple[list[Source], dict[str, list[tuple[Source, dict[str, Any]]]]]:
    """The files of a CSV recording, and each by the first of ``tables`` its header matches:
    table name -> [(its source, column name -> what `envs.data.text.scan_csv` read)], in the
    order given. A file that matches none, a row that does not scan, or no file of the first
    table (the book's) is a `FeedError`."""
    out: dict[str, list] = {table.name: [] for table in tables}
    sources = read_sources(paths, header=True)
    for source in sources:
        header = source.data[: source.start].decode("utf-8", "replace").strip().split(",")
        table = next((t for t in tables if t.matches(header)), None)
        if table is None:
            expected = "; or ".join(",".join(t.columns) for t in tables)
            raise FeedError(
                f"{source.path}, line 1: the header {','.join(header)!r} lacks the columns of "
                f"any file of this format ({expected})"
            )
        kinds, enums = [], []
        for name in header:
            spec = table.columns.get(name, text.CSV_SKIP)
            kind, words = spec if isinstance(spec, tuple) else (spec, None)
            kinds.append(kind)
            enums.append(list(words) if words else None)
        try:
            scanned = text.scan_csv(source.data, source.start, kinds, enums)
        except text.ScanError as error:
            raise source.error(error, header) from None
        columns = {name: scanned[header.index(name)] for name in table.columns}
        out[table.name].append((source, columns))
    if not out[tables[0].name]:
        raise FeedError(f"{', '.join(s.path for s in sources)}: no {tables[0].name} file")
    return sources, out


def table_column(files: Sequence[tuple[Source, dict[str, Any]]], column: str) -> np.ndarray:
    """Column ``column`` of ``files`` joined in order."""
    return np.concatenate([columns[column] for _, columns in files])
