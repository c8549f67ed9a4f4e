"""Input is read with a cap: at most cap + 1 characters, by every reader of user-given text."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import geoask.app.commands.conversations as conversation_command
import geoask.app.commands.sandbox as sandbox_command
import geoask.cases.conversations as conversations
import geoask.cases.loader as case_loader
import geoask.catalog.abbreviations as abbreviations
import geoask.catalog.model as catalog_model
import geoask.db.dataset as dataset
import geoask.sql.casefile as casefile
from geoask.base.capped_input import read_capped_text
from geoask.errors import InputTooLargeError

ROOT = Path(__file__).resolve().parents[1]
ZERO = Path("/dev/zero")


class CountingStream(io.RawIOBase):
    """An endless stream of one byte that counts what was read from it."""

    def __init__(self, byte: bytes) -> None:
        self.byte, self.read_bytes = byte, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        buffer[:] = self.byte * len(buffer)
        self.read_bytes += len(buffer)
        return len(buffer)


def test_text_within_the_cap_is_returned_whole(tmp_path: Path) -> None:
    path = tmp_path / "q.sql"
    path.write_bytes("\ufeffSELECT 'é'\r\n".encode())
    assert read_capped_text(path, 14, what="SQL", encoding="utf-8-sig") == "SELECT 'é'\r\n"
    assert read_capped_text(io.BytesIO(b"x" * 20), 20, what="SQL") == "x" * 20


def test_text_past_the_cap_is_refused_after_reading_about_the_cap() -> None:
    stream = CountingStream(b"\0")
    with pytest.raises(InputTooLargeError, match=r"^SQL holds more than 20,000 characters "
                       r"\(GEOASK_SQL_MAX_CHARS\)"):
        read_capped_text(io.BufferedReader(stream), 20_000, what="SQL",
                         setting="GEOASK_SQL_MAX_CHARS")
    assert stream.read_bytes < 200_000


def test_a_stream_stays_open() -> None:
    stream = io.BytesIO(b"SELECT 1")
    read_capped_text(stream, 100, what="SQL")
    assert not stream.closed


LOADERS: list[tuple[ModuleType, str, Callable[[Path], object]]] = [
    (case_loader, "MAX_DOCUMENT_CHARS", case_loader._read_yaml),
    (conversations, "MAX_DOCUMENT_CHARS", conversations._parse_conversation_file),
    (dataset, "MAX_DOCUMENT_CHARS", dataset.load_dataset),
    (catalog_model, "MAX_DOCUMENT_CHARS", catalog_model.load_catalog),
    (abbreviations, "MAX_DOCUMENT_CHARS", abbreviations.load_abbreviations),
    (casefile, "MAX_DOCUMENT_CHARS", casefile.load_cases),
]


@pytest.mark.parametrize(("module", "name", "load"), LOADERS,
                         ids=[module.__name__ for module, _, _ in LOADERS])
def test_every_file_reader_stops_at_its_cap(module: ModuleType, name: str,
                                            load: Callable[[Path], object],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, name, 1000)
    with pytest.raises(InputTooLargeError, match="holds more than 1,000 characters"):
        load(ZERO)


def test_cli_readers_use_the_helper() -> None:
    for module in (conversation_command, sandbox_command):
        assert module.read_capped_text is read_capped_text


@pytest.mark.parametrize("how", ["path", "stdin"])
def test_sql_check_of_dev_zero_is_one_line_and_small(how: str) -> None:
    command = [sys.executable, "-m", "geoask", "sql", "check",
               str(ZERO) if how == "path" else "-"]
    with ZERO.open("rb") as zero:
        done = subprocess.run(command, stdin=zero if how == "stdin" else subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "holds more than 20,000 characters (GEOASK_SQL_MAX_CHARS)" in done.stderr
