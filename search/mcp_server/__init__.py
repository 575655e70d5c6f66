"""The MCP server of ctxsearch (`ctxsearch mcp`): tools over an index for AI assistants,
over stdio or streamable HTTP, made with the official `mcp` SDK."""
