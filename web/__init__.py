"""The server: one Starlette app with REST at /v1, MCP at /mcp and the dashboard at /."""
