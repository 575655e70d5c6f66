"""Encoders only the lab measures: Word2Vec and FastText trained on a corpus, every
pooling of every layer in one pass, and the static methods by name."""
