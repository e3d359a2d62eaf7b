"""The seed's purchase through the official MCP Python SDK.

Connects to the shop's streamable HTTP endpoint with a bearer token, finds
the phone by keyword, puts it in the cart, orders it and pays the order.
Prints one JSON line on stdout: what each step answered that the caller
checks. Any refusal or protocol error ends the script with a non-zero status
and the reason on stderr.

Usage: seed_purchase.py URL TOKEN KEYWORD SKU_CODE
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class Refused(Exception):
    pass


async def call(session: ClientSession, tool: str, arguments: dict) -> dict:
    result = await session.call_tool(tool, arguments)
    if result.is_error:
        raise Refused(f"{tool} refused: {result.structured_content or result.content}")
    if not isinstance(result.structured_content, dict):
        raise Refused(f"{tool} answered without structured content: {result.content}")
    return result.structured_content


async def purchase(url: str, token: str, keyword: str, sku_code: str) -> dict:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            found = await call(session, "search_product", {"keyword": keyword})
            codes = [item["skuCode"] for item in found["items"]]
            await call(
                session,
                "update_cart_item",
                {"skuCode": sku_code, "action": "add", "quantity": 1},
            )
            order = await call(
                session,
                "create_order",
                {
                    "items": [{"skuCode": sku_code, "quantity": 1}],
                    "receiverName": "李雷",
                    "receiverPhone": "13700137000",
                    "receiverAddress": "北京市海淀区中关村大街 1 号",
                },
            )
            paid = await call(session, "pay_order", {"orderNo": order["orderNo"]})
            return {
                "tools": sorted(tools),
                "foundSkuCodes": codes,
                "orderNo": order["orderNo"],
                "payAmountFen": order["payAmountFen"],
                "paidStatus": paid["order"]["status"],
            }


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    url, token, keyword, sku_code = sys.argv[1:]
    try:
        answer = asyncio.run(purchase(url, token, keyword, sku_code))
    except Refused as refusal:
        print(refusal, file=sys.stderr)
        return 1
    print(json.dumps(answer, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
