"""Claude on Amazon Bedrock and Google Vertex AI: what encoding the request ourselves saves
over the SDK's ``messages.create()``, measured in one run against the loopback server.

    .venv/bin/python benchmarks/cloud.py [--rounds 20] [--exchanges 150]

For each platform, the same streamed request (a history of ``--exchanges`` question and
answer pairs of ~1 kB each, 20 tools, the cache breakpoints) is sent again and again,
rounds of the two ways interleaved: through :class:`~jupyter_agent.models.BedrockModel` /
:class:`~jupyter_agent.models.VertexModel` on a client of their own (the body encoded
here, each turn of the history once; the route and ``anthropic_version`` as the SDK's
client would set them; Bedrock's event stream read with botocore), and through the same
model on a client of the caller's, which goes through ``messages.create()`` (which walks,
copies and encodes the whole request at every call, and builds a typed object for every
event). Both are signed by the SDK (SigV4 over the body on Bedrock). Prints the median
time per request and the ratio; nothing is asserted (machines here are shared and noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from typing import Any

import anthropic

from jupyter_agent.messages import ApiTools, ApiTurn
from jupyter_agent.models import BedrockModel, ModelRequest, VertexModel
from jupyter_agent.testing import MessagesServer, Reply, text

os.environ.update(
    AWS_ACCESS_KEY_ID="AKIDBENCHMARK",
    AWS_SECRET_ACCESS_KEY="benchmark-secret",
    AWS_REGION="us-east-1",
    CLOUD_ML_REGION="us-east5",
    ANTHROPIC_VERTEX_PROJECT_ID="benchmark",
)
TOKEN = "benchmark-access-token"


def request(exchanges: int) -> ModelRequest:
    """A long conversation, as a run sends it (each turn an ApiTurn, the tools ApiTools)."""
    messages: list[dict[str, Any]] = []
    for i in range(exchanges):
        messages.append(ApiTurn(role="user", content=[{"type": "text", "text": f"q{i} " * 250}]))
        answer = [{"type": "text", "text": f"a{i} " * 250}]
        messages.append(ApiTurn(role="assistant", content=answer))
    messages.append(ApiTurn(role="user", content=[{"type": "text", "text": "and now?"}]))
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    tools = ApiTools(
        {"name": f"tool_{i}", "description": "Does a thing. " * 20, "input_schema": schema}
        for i in range(20)
    )
    return ModelRequest(system="You are a data assistant. " * 40, messages=messages, tools=tools)


async def timed(model: Any, sent: ModelRequest) -> float:
    start = time.perf_counter()
    async for _ in model.stream(sent):
        pass
    return time.perf_counter() - start


async def main(rounds: int, exchanges: int) -> None:
    sent = request(exchanges)
    with MessagesServer() as server:
        server.responder = lambda body: Reply([text("ok")])
        models = {
            "Amazon Bedrock": (
                BedrockModel("anthropic.claude-sonnet-4-5-20250929-v1:0", base_url=server.url),
                BedrockModel(
                    "anthropic.claude-sonnet-4-5-20250929-v1:0",
                    client=anthropic.AsyncAnthropicBedrock(base_url=server.url),
                ),
            ),
            "Vertex AI": (
                VertexModel(
                    "claude-sonnet-4-5@20250929", base_url=server.url + "/v1", access_token=TOKEN
                ),
                VertexModel(
                    "claude-sonnet-4-5@20250929",
                    client=anthropic.AsyncAnthropicVertex(
                        base_url=server.url + "/v1", access_token=TOKEN
                    ),
                ),
            ),
        }
        print(
            f"Claude on the cloud platforms: {exchanges} exchanges, 20 tools, "
            f"{rounds} rounds (loopback server, real SDK clients)\n"
        )
        for platform, (ours, sdks) in models.items():
            await timed(ours, sent), await timed(sdks, sent)  # warm up: clients, imports
            mine, theirs = [], []
            for _ in range(rounds):
                mine.append(await timed(ours, sent))
                theirs.append(await timed(sdks, sent))
            size = len(server.requests[-1].raw) / 1000
            a, b = statistics.median(mine) * 1000, statistics.median(theirs) * 1000
            print(f"  {platform} ({size:.0f} kB a request)")
            print(f"    our encoded body     {a:7.1f} ms")
            print(f"    messages.create()    {b:7.1f} ms   ({b / a:.2f}× ours)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--exchanges", type=int, default=150)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.exchanges))
