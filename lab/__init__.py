"""The evaluation lab: benchmarks, research measures, their data loaders, encoders and
reports, beside the product.

It imports the product (`indexer`, `search`) and measures what it does; the product never
imports it (a test holds that). Its commands, `ctxsearch lab ...`, reach the CLI through
an entry point; its third-party packages come with the extras `lab` and `classic`.
"""
