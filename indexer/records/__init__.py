"""Records from apps: what a record is (`record`), checked once, with its metadata values
as the store keeps and filters them, and records read from JSON, CSV and TSV files
(`files`). It lies below the store, the runs and the read core, which all use it and
none of which it knows."""
