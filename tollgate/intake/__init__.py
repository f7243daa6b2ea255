"""How events get in: the producer's submit, fan-out publish, the broker loop, item saves and
the event schema registry."""
