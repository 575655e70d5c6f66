"""The PostgreSQL backend: one index per schema, pgvector spaces, full-text search."""
