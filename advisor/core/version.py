"""advisor's version: the one place it is written (pyproject.toml reads it here, through hatch), so every
stage can stamp it without importing the package's top, which stands above them all."""

__version__ = "0.1.0"
