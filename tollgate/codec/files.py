"""Files that hold secrets or customer data: readable by their owner only.

A file is created at 0600 (never written first and narrowed after, which would leave a moment
when others can read it) and its folder at 0700. Used for the key ring, the codec token, the dev
stack's tenant keys and endpoints, the stand-ins' records, the ``ops backup`` dumps and the logs
``tollgate dev``'s processes write (``temporal.log``, ``workers.log``).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import BinaryIO

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path, mode: int = DIR_MODE) -> Path:
    """``path`` and any missing parents made at ``mode`` (0700); an existing ``path`` is
    narrowed to it."""
    path.mkdir(mode=mode, parents=True, exist_ok=True)
    path.chmod(mode)
    return path


def create_private(path: Path) -> Path:
    """``path`` exists, at 0600, in a folder made private when new; its content is kept."""
    if not path.parent.exists():
        private_dir(path.parent)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
    path.chmod(FILE_MODE)  # a file made earlier by a looser version of this code
    return path


def write_private(path: Path, text: str) -> None:
    """Replace the content of ``path`` with ``text``, the file at 0600 throughout."""
    create_private(path)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def append_private(path: Path) -> BinaryIO:
    """``path`` open for appending bytes, created at 0600; a file made earlier at a looser mode
    is narrowed. For the log a started process writes to."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return os.fdopen(fd, "ab")


def narrow_existing(*paths: Path) -> None:
    """Each of ``paths`` that exists made 0600: files that an earlier version left at the
    umask's mode, and that another program reopens as they are."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.chmod(FILE_MODE)
