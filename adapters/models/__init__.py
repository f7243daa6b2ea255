"""The model ports' implementations: OpenAI, Anthropic, the offline drafter and tagger, and
the tolerant parsing of what models return."""
