"""The evaluation lab: benchmarks, metrics, datasets, reports and speed measurements.

Nothing on the query path imports this package; it measures what the library does.
"""
