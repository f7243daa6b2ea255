"""Development tools, not shipped (docs/adr/0023-tools-apart-from-what-ships.md): the embedded
stack, its guard process, embedded PostgreSQL, the stand-in targets, the demo and examples."""
