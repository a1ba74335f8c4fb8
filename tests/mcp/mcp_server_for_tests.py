"""A small MCP server for the tests, written with the mcp SDK: over stdio by default,
over streamable HTTP with ``--http PORT``, over the older HTTP+SSE with ``--sse PORT``.

Its tools: ``echo`` (text), ``add`` (structured content), ``picture`` (an image; with
``bad_crc``, one whose optional text chunk has a wrong checksum), ``count`` (reports
progress), ``fail`` (an ``isError`` result), ``leak`` (prints an environment variable's
value), ``huge`` (a very long text), ``hang`` (never answers), ``freeze`` (blocks the whole
server), ``chatter`` (writes a line to stderr), ``crash`` (kills the process), ``link`` (a
resource link and an embedded resource). ``--silent`` never answers initialize;
``--many N`` adds N tools with long descriptions and schemas (``tool_0``…).
"""

from __future__ import annotations

import base64
import io
import os
import struct
import sys
import time
import zlib
from typing import Any

try:  # mcp 2.x
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x (the checker sees 2.x, where these are absent)
    from mcp.server.fastmcp import Context  # type: ignore[no-redef,attr-defined]
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef,attr-defined]

from mcp.types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

server = Server("test-server")


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> dict[str, int]:
    """Add two numbers."""
    return {"sum": a + b}


def bad_crc_png(png: bytes) -> bytes:
    """``png`` with a ``tEXt`` chunk (optional: its first letter is lowercase) whose CRC
    is wrong, after the header, as some screenshot tools write them."""
    text = b"tEXt" + b"Comment\x00made by a careless tool"
    chunk = struct.pack(">I", len(text) - 4) + text + struct.pack(">I", zlib.crc32(text) ^ 1)
    end_of_ihdr = 8 + 4 + 4 + 13 + 4
    return png[:end_of_ihdr] + chunk + png[end_of_ihdr:]


@server.tool()
def picture(bad_crc: bool = False) -> CallToolResult:
    """A small red square."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (40, 30), "red").save(out, format="PNG")
    png = bad_crc_png(out.getvalue()) if bad_crc else out.getvalue()
    data = base64.b64encode(png).decode()
    return CallToolResult(
        content=[
            TextContent(type="text", text="a red square"),
            ImageContent(type="image", data=data, mime_type="image/png"),
        ]
    )


@server.tool()
async def count(ctx: Context) -> str:
    """Count to three, reporting progress."""
    for step in range(1, 4):
        await ctx.report_progress(step, 3, f"step {step}")
    return "counted"


@server.tool()
def fail() -> CallToolResult:
    """Report an error."""
    return CallToolResult(content=[TextContent(type="text", text="no such issue")], is_error=True)


@server.tool()
def leak(name: str) -> str:
    """Print an environment variable's value."""
    return f"the value is {os.environ.get(name, '(unset)')}"


@server.tool()
def huge() -> str:
    """A very long text."""
    return "x" * 200_000


@server.tool()
async def hang() -> str:
    """Never answers."""
    import anyio

    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        sys.stderr.write("hang was cancelled\n")  # the client's notifications/cancelled
        sys.stderr.flush()
        raise
    return "never"


@server.tool()
async def freeze() -> str:
    """Block the server's own event loop: it reads nothing more, answers nothing."""
    time.sleep(3600)  # noqa: ASYNC251 - blocking the loop is the point
    return "never"


@server.tool()
def chatter(line: str) -> str:
    """Write a line to stderr."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
    return "said"


@server.tool()
def crash() -> str:
    """Kill the server process."""
    sys.stderr.write("about to crash on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def link() -> CallToolResult:
    """A resource link and an embedded resource."""
    return CallToolResult(
        content=[
            ResourceLink(type="resource_link", uri="file:///data/report.csv", name="report"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="memo://note", text="the memo text"),
            ),
        ]
    )


def add_many(count: int) -> None:
    """``count`` more tools, each with a long description and a schema of ten fields."""
    fields = ", ".join(f"field_{j}: str = ''" for j in range(10))
    for i in range(count):
        namespace: dict[str, Any] = {}
        exec(f"def tool_{i}({fields}) -> str:\n    return 'tool {i}'", namespace)
        made = namespace[f"tool_{i}"]
        made.__doc__ = f"Tool number {i}. " + "It does one of many small things. " * 12
        server.tool()(made)


if __name__ == "__main__":
    if "--many" in sys.argv:
        add_many(int(sys.argv[sys.argv.index("--many") + 1]))
    if "--silent" in sys.argv:
        sys.stdin.read()  # reads, never answers; exits when its stdin closes
        time.sleep(0.1)
        sys.exit(0)
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        import uvicorn

        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="error")
    elif "--sse" in sys.argv:
        port = int(sys.argv[sys.argv.index("--sse") + 1])
        import uvicorn

        uvicorn.run(server.sse_app(), host="127.0.0.1", port=port, log_level="error")
    else:
        server.run()
