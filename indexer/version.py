"""The package version, recorded in every index manifest."""

__version__ = "0.1.0"
