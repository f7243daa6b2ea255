"""The HTTP surface: signed webhook intake with an outbox, the review API and the web inbox."""
