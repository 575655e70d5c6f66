"""Exit codes the command line shares beyond click's own (docs/errors.md has them all)."""

EXIT_INTERRUPTED = 130  # the shell's code for a command ended by Ctrl-C (or a stop signal)
