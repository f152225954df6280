"""The version of roofline (the package, its cache keys and its results say it)."""

__version__ = "0.1.0"
