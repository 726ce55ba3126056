"""`envs.errors`' writing helpers: an error of writing named by its path, files written under
a temporary name and renamed when complete, alone or together, and nothing left when a write
fails; and the nearest of a set of choices named for a mistyped one."""

from __future__ import annotations

import errno
import sqlite3

import pytest

from tradearena.envs.errors import (
    OutputError,
    did_you_mean,
    into,
    output_error,
    replacing,
    together,
)


def _full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_output_errors_name_the_path():
    full = OSError(errno.ENOSPC, "No space left on device")
    assert (
        str(output_error(full, "/out/a.csv")) == "cannot write /out/a.csv: No space left on device"
    )
    refused = PermissionError(errno.EACCES, "Permission denied", "/ro/run")
    assert str(output_error(refused)) == "cannot write /ro/run: Permission denied"
    blocked = FileExistsError(errno.EEXIST, "File exists", "/x/file")
    assert str(output_error(blocked)) == "cannot write /x/file: a file is in the way of a directory"
    locked = sqlite3.OperationalError("database or disk is full")
    assert str(output_error(locked, "/run")) == "cannot write /run: database or disk is full"
    assert output_error(full) is None  # names no file
    assert output_error(OSError(errno.EIO, "I/O error"), "/x") is None  # not the user's
    assert output_error(ValueError("bug"), "/x") is None


def test_a_file_replaced_appears_whole_or_not_at_all(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("old\n")
    with replacing(path) as temporary:
        assert temporary.parent == tmp_path and temporary.suffix == ".csv"
        temporary.write_text("new\n")
        assert path.read_text() == "old\n"
    assert path.read_text() == "new\n"
    full = f"^cannot write {path}: No space left on device$"
    with pytest.raises(OutputError, match=full), replacing(path) as temporary:
        temporary.write_text("half")
        _full()
    assert path.read_text() == "new\n" and sorted(tmp_path.iterdir()) == [path]


def test_files_together_appear_when_all_are_written(tmp_path):
    first, second = tmp_path / "one.png", tmp_path / "two.png"
    with pytest.raises(KeyboardInterrupt), together():
        with replacing(first) as temporary:
            temporary.write_bytes(b"1")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    with together():
        for path in (first, second):
            with replacing(path) as temporary:
                temporary.write_bytes(b"x")
        assert list(tmp_path.iterdir()) and not first.exists()
    assert sorted(tmp_path.iterdir()) == [first, second]


def test_a_directory_made_for_a_failed_write_is_removed(tmp_path):
    out = tmp_path / "new" / "out"
    with pytest.raises(OutputError), into(out), replacing(out / "a.csv") as temporary:
        temporary.write_text("x")
        _full()
    assert not out.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    with pytest.raises(OutputError), into(kept):
        _full_in(kept)
    assert kept.is_dir()
    (tmp_path / "file").write_text("")
    blocked = "file: a file is in the way of a directory"
    with pytest.raises(OutputError, match=blocked), into(tmp_path / "file"):
        pass


def _full_in(directory):
    with replacing(directory / "a.csv"):
        _full()


@pytest.mark.parametrize(
    "given, expected",
    [
        ("event", " (did you mean 'events'?)"),  # difflib's ratio
        ("maker", " (did you mean 'making'?)"),  # the longest shared start
        ("exe", " (did you mean 'execution'?)"),
        ("ma", ""),  # too short a start to guess from
        ("quote", ""),
    ],
)
def test_did_you_mean_names_the_nearest_choice(given, expected):
    assert did_you_mean(given, ["making", "execution", "events"]) == expected
