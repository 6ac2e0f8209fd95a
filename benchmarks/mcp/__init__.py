"""MCP gateway tokens: what an MCP client sends the model through `toolsearch serve` against listing
every upstream tool directly, through the real `mcp` client (mcp-server-time, mcp-server-git, and a
1,000-tool catalog).

    python -m benchmarks mcp [--quick] [--out DIR]
"""
