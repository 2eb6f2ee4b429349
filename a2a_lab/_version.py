"""The package version, in a leaf module: every layer may read it without importing the package."""

__version__ = "0.1.0"
