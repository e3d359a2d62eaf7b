"""The seed's purchase through the official MCP Python SDK.

Connects to the shop's streamable HTTP endpoint with a bearer token,
speaking MCP 2026-07-28 where the server does, finds the phone by keyword,
puts it in the cart, orders it and pays the order. When the shop asks the
shopper mid-call (`input_required`), the SDK's own round trip answers: a
payment page (URL mode) is opened and its "pay" button pressed, as the
shopper would in the browser, and the page accepted; a form gets the
payment method. Prints one JSON line on stdout: what each step answered
and what the shop asked, for the caller to check. Any refusal or protocol
error ends the script with a non-zero status and the reason on stderr.

Usage: seed_purchase.py URL TOKEN KEYWORD SKU_CODE
"""

import asyncio
import json
import sys
import urllib.request

import anyio
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class Refused(Exception):
    pass


async def call(client: Client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise Refused(f"{tool} refused: {result.structured_content or result.content}")
    if not isinstance(result.structured_content, dict):
        raise Refused(f"{tool} answered without structured content: {result.content}")
    return result.structured_content


def press_pay(url: str) -> int:
    """The shopper's browser: opens the payment page and presses "pay"."""
    with urllib.request.urlopen(url) as page:
        if b'id="pay"' not in page.read():
            raise Refused(f"the payment page {url} has no pay button")
    with urllib.request.urlopen(urllib.request.Request(url, data=b"", method="POST")) as paid:
        return paid.status


async def purchase(url: str, token: str, keyword: str, sku_code: str) -> dict:
    asked: list[dict] = []

    async def answer(context, params) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            status = await anyio.to_thread.run_sync(press_pay, params.url)
            asked.append({"mode": "url", "url": params.url, "pagePaid": status})
            return types.ElicitResult(action="accept")
        asked.append({"mode": "form", "message": params.message})
        return types.ElicitResult(action="accept", content={"method": "alipay"})

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, elicitation_callback=answer) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        found = await call(client, "search_product", {"keyword": keyword})
        codes = [sku["skuCode"] for model in found["items"] for sku in model["skus"]]
        await call(
            client,
            "update_cart_item",
            {"skuCode": sku_code, "action": "add", "quantity": 1},
        )
        order = await call(
            client,
            "create_order",
            {
                "items": [{"skuCode": sku_code, "quantity": 1}],
                "receiverName": "李雷",
                "receiverPhone": "13700137000",
                "receiverAddress": "北京市海淀区中关村大街 1 号",
            },
        )
        paid = await call(client, "pay_order", {"orderNo": order["orderNo"]})
        return {
            "protocolVersion": client.protocol_version,
            "tools": sorted(tools),
            "foundSkuCodes": codes,
            "orderNo": order["orderNo"],
            "payAmountFen": order["payAmountFen"],
            "paidStatus": paid["order"]["status"],
            "asked": asked,
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
