"""The ways a query can be answered, and the default (cheap to import: no FAISS, no torch)."""

MODES = ("hybrid", "contextual", "static", "lexical")
# Hybrid is the default because it measured best on SciFact (see the README's table):
# it needs the model like contextual does, and its lexical half adds ~1-2 ms.
DEFAULT_MODE = "hybrid"
