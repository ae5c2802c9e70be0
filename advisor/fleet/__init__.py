"""Fleets: many profiles analysed on dask.distributed into a Parquet store, and the overview, trends and
histories read back from it (docs/scaling.md)."""
