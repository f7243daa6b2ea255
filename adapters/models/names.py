"""The offline drafter's model name, apart from the drafter: the settings tree gives it as the
default model (``tollgate.config.models``), and every command reads the settings, while the
drafter imports every contract and the model ports (``tollgate submit`` and ``ops status`` paid
for them to read one string)."""

OFFLINE_MODEL = "offline-template-v1"
