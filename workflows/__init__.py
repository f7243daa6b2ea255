"""Deterministic orchestration and the pure contracts it exchanges."""
