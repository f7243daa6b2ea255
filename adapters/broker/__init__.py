"""Message brokers that feed the intake."""
