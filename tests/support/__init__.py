"""Helpers shared by the test folders: slow obvious implementations, case loaders, models."""
