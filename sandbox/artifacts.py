"""Copy the files a successful sandbox run wrote to ``/scratch`` to the artifact store."""

from __future__ import annotations

import mimetypes
import os
import shutil
import stat
from pathlib import Path

from geoask.base.formats import EXPORT_FORMATS
from geoask.base.storage import filesystem_for
from sandbox.models import Artifact

#: Most files collected from one run's ``/scratch``.
MAX_ARTIFACTS = 200

for _format in EXPORT_FORMATS:  # a script's file of an export suffix gets its media type
    mimetypes.add_type(_format.media_type, _format.suffix)
mimetypes.add_type("application/geopackage+sqlite3", ".gpkg")


def collect_artifacts(
    scratch: Path, target_url: str, seen: dict[str, tuple[int, int]] | None = None
) -> tuple[list[Artifact], str | None]:
    """Copy the regular files under ``scratch`` to the fsspec folder ``target_url``.

    Links are not followed and, like pipes and devices, skipped; at most
    :data:`MAX_ARTIFACTS` files are kept. Returns the artifacts and a note on what was skipped
    (None when nothing was). With ``seen`` (a session's record: name -> (mtime ns, size) of
    files collected before), only new or changed files are copied, and ``seen`` is updated.
    """
    files: list[tuple[str, Path, int]] = []
    past_cap = not_regular = 0
    for directory, subdirs, names in os.walk(scratch, followlinks=False):
        not_regular += sum(Path(directory, d).is_symlink() for d in subdirs)
        subdirs[:] = [d for d in subdirs if not Path(directory, d).is_symlink()]
        for name in sorted(names):
            path = Path(directory, name)
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode):
                not_regular += 1
            elif seen is not None and seen.get(path.relative_to(scratch).as_posix()) == (
                    info.st_mtime_ns, info.st_size):
                continue
            elif len(files) >= MAX_ARTIFACTS:
                past_cap += 1
            else:
                files.append((path.relative_to(scratch).as_posix(), path, info.st_size))
                if seen is not None:
                    seen[files[-1][0]] = (info.st_mtime_ns, info.st_size)
    notes = []
    if past_cap:
        notes.append(f"{past_cap} files past the first {MAX_ARTIFACTS} were not collected")
    if not_regular:
        notes.append(f"{not_regular} links, pipes or devices were skipped")
    note = "; ".join(notes) or None
    if not files:
        return [], note
    filesystem, root = filesystem_for(target_url)
    artifacts = []
    for name, path, size in files:
        target = f"{root}/{name}"
        filesystem.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as source, filesystem.open(target, "wb") as sink:
            shutil.copyfileobj(source, sink)
        media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        artifacts.append(Artifact(
            name=name, uri=filesystem.unstrip_protocol(target), size_bytes=size,
            media_type=media_type,
        ))
    return artifacts, note
