"""An MCP server (the official Python SDK's MCPServer, stdio) whose tools
declare an `outputSchema` (from their return types) and return large
structured content, for cli/tests/mcp_proxy.rs (issue #39):

* `list_items(n)`: a page of `n` items, `{"items": [{"id", "name",
  "tags"}], "total"}`: thinned keeping its shape, it still validates;
* `at_least(n)`: the same items under a schema that asks for at least
  `n` of them (`minItems`): thinned, it cannot validate.

The SDK also writes each result as JSON text (the spec's backwards
compatible form), so the text block holds a JSON document too.
"""

from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer

server = MCPServer("schema-server")


class Item(BaseModel):
    id: int
    name: str
    tags: list[str]


class Page(BaseModel):
    items: list[Item]
    total: int


class Strict(BaseModel):
    items: list[Item] = Field(min_length=1000)
    total: int


def items(n: int) -> list[Item]:
    return [Item(id=i, name=f"item {i}", tags=["alpha", "beta"]) for i in range(n)]


@server.tool()
def list_items(n: int) -> Page:
    """A page of n items."""
    return Page(items=items(n), total=n)


@server.tool()
def at_least(n: int) -> Strict:
    """n items (at least 1000 by the schema)."""
    return Strict(items=items(n), total=n)


if __name__ == "__main__":
    server.run("stdio")
