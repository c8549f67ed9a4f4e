"""Where geoask writes artifacts: local folders or fsspec URLs (``s3://``, ``gcs://``, ...).

Every place that opens an artifact location asks :func:`filesystem_for`, so an unknown
protocol or a missing filesystem package is one clear :class:`~geoask.errors.ArtifactWriteError`
(and, for the settings, one line at start-up) rather than fsspec's traceback;
:func:`write_atomic` writes every artifact file (exports, maps, registries) whole or not at all.
"""

from __future__ import annotations

import os
import posixpath
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, BinaryIO

from geoask.errors import ArtifactWriteError

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem


def filesystem_for(url: str) -> tuple[AbstractFileSystem, str]:
    """The fsspec filesystem of ``url`` and the path inside it.

    Raises:
        ArtifactWriteError: the protocol is unknown, or the package that implements it (e.g.
            ``s3fs`` for ``s3://``) is not installed.

    """
    import fsspec

    try:
        return fsspec.core.url_to_fs(url)
    except ValueError as error:
        raise ArtifactWriteError(
            f"{url!r} is not a storage location geoask can write to ({error}); use a local "
            "folder or an fsspec URL such as s3://bucket/path") from None
    except ImportError as error:
        raise ArtifactWriteError(
            f"{url!r} needs a filesystem package that is not installed ({error})") from None


def check_storage_url(url: str | None) -> str | None:
    """``url`` unchanged when it names a usable location (local paths are not touched).

    For settings validators: only URLs with a protocol (``scheme://``) are checked, by
    building their filesystem class (no connection is made).

    Raises:
        ValueError: the protocol is unknown or its package is missing (pydantic reports it).

    """
    if url is None or "://" not in url:
        return url
    import fsspec

    protocol = url.split("://", 1)[0]
    try:
        fsspec.get_filesystem_class(protocol)
    except ValueError:
        raise ValueError(f"unknown storage protocol {protocol!r} in {url!r}; use a local "
                         "folder or an fsspec URL such as s3://bucket/path") from None
    except ImportError as error:
        raise ValueError(f"{url!r} needs a filesystem package that is not installed "
                         f"({error})") from None
    return url


def write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (fsspec URL or local path) so it appears whole or not at all.

    Raises:
        ArtifactWriteError: the folder or the file could not be written.

    """
    with open_atomic(path) as handle:
        handle.write(data)


@contextmanager
def open_atomic(path: str) -> Iterator[BinaryIO]:
    """A binary file that appears at ``path`` whole when the block ends, or never.

    The bytes go to a hidden temporary file in the same folder (fsync'd on local disks), which
    is moved onto ``path`` when the block ends normally and removed when it raises: a writer
    that streams a large file (:mod:`geoask.sql.stream_export`) and stops half-way leaves
    nothing behind.

    Raises:
        ArtifactWriteError: the folder or the file could not be written.

    """
    from fsspec.implementations.local import LocalFileSystem

    try:
        fs, fs_path = filesystem_for(path)
        folder = posixpath.dirname(fs_path)
        temporary = posixpath.join(folder, f".{posixpath.basename(fs_path)}.{uuid.uuid4().hex}.tmp")
        fs.makedirs(folder, exist_ok=True)
    except OSError as error:
        raise ArtifactWriteError(f"cannot create the artifact folder for {path}: {error}") from None
    local = isinstance(fs, LocalFileSystem)
    try:
        with (open(temporary, "wb") if local else fs.open(temporary, "wb")) as handle:
            yield handle
            if local:
                handle.flush()
                os.fsync(handle.fileno())
        if local:
            os.replace(temporary, fs_path)
        else:
            fs.mv(temporary, fs_path)
    except OSError as error:
        _remove_quietly(fs, temporary)
        raise ArtifactWriteError(f"cannot write {path}: {error}") from None
    except BaseException:
        _remove_quietly(fs, temporary)
        raise


def _remove_quietly(fs: AbstractFileSystem, path: str) -> None:
    try:
        if fs.exists(path):
            fs.rm(path)
    except OSError:  # best effort: the temporary name is hidden and never read
        pass
