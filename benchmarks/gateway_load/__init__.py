"""Load on the HTTP gateway: N concurrent authenticated MCP sessions for a bounded time, one process
and two replicas on Redis (real `toolsearch serve` subprocesses, the real `mcp` client).

    python -m benchmarks.gateway_load [--sessions 16] [--seconds 30] [--out benchmarks/results]
"""
