"""Running writes: folder runs, record runs, repair, removal and the encoding backends (in
process or on Ray), all through one `Run`."""
