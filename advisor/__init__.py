"""advisor: a rules-based performance advisor for ML-accelerator profiles."""

__version__ = "0.1.0"
