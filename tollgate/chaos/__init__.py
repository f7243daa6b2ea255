"""Seeded chaos: a reproducible fault schedule over a real stack, then the invariants."""
