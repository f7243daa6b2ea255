"""What every shipped process of the shell runs on: the Temporal client, the worker assembly,
health endpoints, deployment versions and the exit codes."""
