"""Perfetto protobuf traces (.pb, .pftrace; gzip too) read into slices, for any kind whose profiler
writes them. Nothing here knows what a track means: that is the kind's (RBLN: its tracks.yaml).

- `packets`: the top-level framing, split into whole-packet ranges without decoding (any file size);
- `extract` (phase 1, stateless, so ranges decode in worker processes): packets to compact `rows`;
- `resolve` (phase 2, in file order): incremental state, clocks, BEGIN/END pairing per track, slice
  ids and flow ids, tracks as the trace described them;
- `flows`: flow ids to (from, to) slice edges;
- `arguments`: a slice's bytes and cycles from the debug annotations a kind names (`Arguments`);
- `reader`: a file (mapped, or gunzipped a block at a time) through both phases, on a process pool
  for large files, within the --max-memory limit.
"""
