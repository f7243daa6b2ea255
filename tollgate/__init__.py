"""The application shell: configuration, client, CLI, embedded dev stack and demo."""
