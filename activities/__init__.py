"""Thin activity classes: each method calls one port, maps errors to the taxonomy."""
