"""Logs, metrics and traces of every process the project starts."""
