"""MCP (Model Context Protocol) over the same store: one JSON-RPC dispatcher served on stdio
(``memorycloud mcp``) and as streamable HTTP on the daemon (``/mcp``)."""
