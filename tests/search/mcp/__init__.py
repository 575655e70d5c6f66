"""Tests of `ctxsearch mcp` with the MCP SDK's own clients."""
