"""Databases of the tests' own on one PostgreSQL server: empty, or already migrated.

Nearly every test module works on a schema, and each used to migrate an empty database from
scratch (every file in ``adapters/postgres/migrations``). Here a test process migrates one
template per server the first time it needs one, and each migrated database after that is a
``CREATE DATABASE … TEMPLATE`` copy of it: a worker's or a command's ``create_pool`` on the copy
finds every migration recorded and applies nothing, but still compares the recorded checksums
with the files (docs/adr/0024), since the copy holds the template's ``schema_migrations`` rows.

Tests of the migrations themselves (tests/adapters/test_migrations.py, ``ops migrate``, the
migrations job) need an empty database and make one with ``empty_database``.
"""

from __future__ import annotations

import uuid

import asyncpg

from adapters.postgres.pool import create_pool

#: This process's template on each server (by the server's URL): made once, then only copied.
#: A test process is one pytest process (one pytest-xdist worker); processes sharing a server
#: (``DATABASE_URL``) each make their own, so no copy waits on another process's template.
_TEMPLATES: dict[str, str] = {}


def with_database(url: str, name: str) -> str:
    """``url`` (a server's, or any database's on it) pointing at the database ``name``."""
    head, _, query = url.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{name}" + (f"?{query}" if query else "")


async def _create(server_url: str, name: str, template: str | None = None) -> str:
    admin = await asyncpg.connect(server_url)
    try:
        copy_of = f' TEMPLATE "{template}"' if template else ""
        await admin.execute(f'CREATE DATABASE "{name}"{copy_of}')
    finally:
        await admin.close()
    return with_database(server_url, name)


async def empty_database(server_url: str, prefix: str = "e") -> str:
    """The URL of a new database with no schema at all, named ``PREFIX_<random>``."""
    return await _create(server_url, f"{prefix}_{uuid.uuid4().hex[:12]}")


async def migrated_template(server_url: str) -> str:
    """The name of this process's migrated template on the server, made on first use.

    Nobody may connect to it once it is migrated (``ALLOW_CONNECTIONS false``): PostgreSQL
    refuses to copy a database someone is connected to, and a test that reached it by mistake
    would make every later copy fail.
    """
    if server_url in _TEMPLATES:
        return _TEMPLATES[server_url]
    name = f"tmpl_{uuid.uuid4().hex[:12]}"
    pool = await create_pool(await _create(server_url, name), max_size=1)
    await pool.close()
    admin = await asyncpg.connect(server_url)
    try:
        await admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
    finally:
        await admin.close()
    _TEMPLATES[server_url] = name
    return name


async def fresh_database(server_url: str, prefix: str = "s") -> str:
    """The URL of a new database with the whole schema, as a worker's start would leave it
    (a copy of the migrated template), named ``PREFIX_<random>``."""
    template = await migrated_template(server_url)
    return await _create(server_url, f"{prefix}_{uuid.uuid4().hex[:12]}", template)
