"""Where a stand-in keeps its records: a string key -> JSON object map, in memory, or also in a
SQLite file so a restarted stand-in still knows its customers and messages.

One file per stand-in (stdlib ``sqlite3``, one table). Every write is committed before it
returns, so a stand-in killed right after answering still has what it answered about; reads are
served from memory, which is loaded once when the store opens. Only one process may use a file
at a time: the dev stack makes sure of that (one ``tollgate dev`` per state folder).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from tollgate.codec.files import create_private, private_dir


class StoreError(RuntimeError):
    """The store's file cannot be read or written; the message names the file, in one line."""


class RecordStore:
    """Thread-safe records of one stand-in. ``path=None`` keeps them in memory only (tests).

    ``lock`` is re-entrant: hold it across a read-modify-write so concurrent requests cannot
    lose an update.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.lock = threading.RLock()
        self._records: dict[str, dict[str, Any]] = {}
        self._db: sqlite3.Connection | None = None
        if path is not None:
            self._load()

    def _load(self) -> None:
        try:
            rows = self._connect().execute("SELECT key, body FROM records ORDER BY rowid")
            self._records = {key: json.loads(body) for key, body in rows}
        except (sqlite3.Error, ValueError) as exc:
            raise StoreError(f"stand-in store {self.path} is unreadable: {exc}") from None

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            assert self.path is not None
            try:
                # Customer records: the folder 0700, the file 0600 (SQLite gives its -wal and
                # -shm files the database file's mode).
                private_dir(self.path.parent)
                create_private(self.path)
                # Handlers run on many threads; ``lock`` serialises every use of the connection.
                db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                # WAL + NORMAL survives a killed process (not a power cut), which is the case here.
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("CREATE TABLE IF NOT EXISTS records "
                           "(key TEXT PRIMARY KEY, body TEXT NOT NULL)")
            except sqlite3.Error as exc:
                raise StoreError(f"stand-in store {self.path} is unusable: {exc}") from None
            self._db = db
        return self._db

    def _write(self, sql: str, *args: str) -> None:
        if self.path is None:
            return
        try:
            self._connect().execute(sql, args)
        except sqlite3.Error as exc:
            raise StoreError(f"stand-in store {self.path}: write failed: {exc}") from None

    def get(self, key: str) -> dict[str, Any] | None:
        with self.lock:
            found = self._records.get(key)
            return dict(found) if found is not None else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Stores ``value`` under ``key``, replacing what was there (its place in order stays)."""
        with self.lock:
            self._write("INSERT INTO records (key, body) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET body = excluded.body",
                        key, json.dumps(value))
            self._records[key] = dict(value)

    def add(self, key: str, value: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Stores ``value`` unless ``key`` exists; returns (the stored value, whether it is new)."""
        with self.lock:
            existing = self._records.get(key)
            if existing is not None:
                return dict(existing), False
            self.put(key, value)
            return dict(value), True

    def delete(self, key: str) -> None:
        with self.lock:
            self._write("DELETE FROM records WHERE key = ?", key)
            self._records.pop(key, None)

    def values(self) -> list[dict[str, Any]]:
        """Every record, oldest first."""
        with self.lock:
            return [dict(v) for v in self._records.values()]

    def clear(self) -> None:
        with self.lock:
            self._write("DELETE FROM records")
            self._records.clear()

    def __len__(self) -> int:
        with self.lock:
            return len(self._records)

    def close(self) -> None:
        """Closes the file (the records stay readable; a later write opens it again)."""
        with self.lock:
            if self._db is not None:
                self._db.close()
                self._db = None
