"""An independent platform: checks out at the shop over the standard's MCP
binding and pays with a mandate it signs itself.

Discovers the shop at URL (its `/.well-known/ucp` profile, validated by
the UCP Python SDK's models), makes a P-256 device key (`jwcrypto`) and
binds it at the shop (`POST /account/devices`), then through the MCP
endpoint the profile names (the official MCP Python SDK) creates a
checkout shipping to the shopper's first saved address, reads it, signs
a checkout mandate over it with the SD-JWT reference implementation
(`sd-jwt`: issuer-signed by the device key, `cnf` that key, the checkout
as a claim; key binding with the shop's origin as audience and the
checkout's id as nonce) and completes it, reads the order at its
permalink; then presents the same mandate again. Every answer is validated with the UCP models: checkouts as the
checkout with its fulfillment, discount and AP2 extensions, failures as
the error response.

Prints one JSON object on stdout: each step's status and the order's id.
Any validation failure or unexpected answer ends the script with a
non-zero status and the reason on stderr.

Every call names the platform's profile at PROFILE_URL (`meta`).

Usage: ucp_mcp_platform.py URL PROFILE_URL
"""

import asyncio
import json
import sys
import time
import urllib.request
import uuid
from urllib.parse import urlsplit

from jwcrypto.jwk import JWK
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sd_jwt.holder import SDJWTHolder
from sd_jwt.issuer import SDJWTIssuer
from ucp_sdk.models.schemas import profile
from ucp_sdk.models.schemas.common import payment_ap2_mandate
from ucp_sdk.models.schemas.common.types import error_response
from ucp_sdk.models.schemas.shopping import (
    cart,
    catalog_lookup,
    catalog_search,
    discount,
    fulfillment,
    order,
)



def checkout(answer: dict) -> dict:
    for model in (fulfillment.Checkout, discount.Checkout, payment_ap2_mandate.Checkout):
        model.model_validate(answer)
    return answer


def failure(answer: dict) -> dict:
    error_response.ErrorResponse.model_validate(answer)
    return answer


def http_json(method: str, url: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def mandate_for(shown: dict, device: JWK, kid: str, audience: str) -> str:
    now = int(time.time())
    issuer = SDJWTIssuer(
        {"iat": now, "exp": now + 600, "checkout": shown},
        device,
        holder_key=device,
        sign_alg="ES256",
        extra_header_parameters={"typ": "dc+sd-jwt", "kid": kid},
    )
    holder = SDJWTHolder(issuer.sd_jwt_issuance)
    holder.create_presentation({}, nonce=shown["id"], aud=audience, holder_key=device, sign_alg="ES256")
    return holder.sd_jwt_presentation


async def tool(client: Client, name: str, arguments: dict) -> tuple[bool, dict]:
    result = await client.call_tool(name, arguments)
    if not isinstance(result.structured_content, dict):
        sys.exit(f"{name} answered without structured content: {result.content}")
    return bool(result.is_error), result.structured_content


async def shop(base: str, profile_url: str) -> dict:
    agent = {"ucp-agent": {"profile": profile_url}}
    found = http_json("GET", f"{base}/.well-known/ucp")
    profile.BusinessSchema.model_validate(found)
    services = {s["transport"]: s["endpoint"] for s in found["ucp"]["services"]["dev.ucp.shopping"]}
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(services["mcp"]))

    device = JWK.generate(kty="EC", crv="P-256")
    bound = http_json("POST", f"{base}/account/devices", {"jwk": device.export_public(as_dict=True)})
    steps = {}
    async with Client(streamable_http_client(services["mcp"])) as client:
        failed, found = await tool(client, "search_catalog", {
            "meta": agent, "catalog": {"query": "iPhone 17", "pagination": {"limit": 5}},
        })
        catalog_search.SearchResponse.model_validate(found)
        variants = [v["id"] for p in found["products"] for v in p["variants"]]
        steps["search"] = [failed, "MG6W4CH/A" in variants]
        failed, looked_up = await tool(client, "lookup_catalog", {
            "meta": agent, "catalog": {"ids": ["MG6W4CH/A", "NO-SUCH-ID"]},
        })
        catalog_lookup.LookupResponse.model_validate(looked_up)
        steps["lookup"] = [failed, [v["id"] for p in looked_up["products"] for v in p["variants"]]]
        failed, detail = await tool(client, "get_product", {
            "meta": agent, "catalog": {"id": "MG6W4CH/A"},
        })
        catalog_lookup.GetProductResponse.model_validate(detail)
        steps["product"] = [failed, len(detail["product"]["variants"]) > 1]
        failed, basket = await tool(client, "create_cart", {
            "meta": agent,
            "cart": {"line_items": [{"item": {"id": "MG6W4CH/A"}, "quantity": 1}]},
        })
        cart.Cart.model_validate(basket)
        steps["cart"] = [failed, [line["item"]["id"] for line in basket["line_items"]]]
        failed, created = await tool(client, "create_checkout", {
            "meta": agent,
            "checkout": {"line_items": [{"item": {"id": "MG6W4CH/A"}, "quantity": 1}]},
        })
        steps["create"] = [failed, checkout(created)["status"]]
        first = created["fulfillment"]["methods"][0]["destinations"][0]["id"]
        failed, ready = await tool(client, "update_checkout", {
            "meta": agent,
            "id": created["id"],
            "checkout": {
                "line_items": [{"item": {"id": "MG6W4CH/A"}, "quantity": 1}],
                "fulfillment": {"methods": [{"type": "shipping", "selected_destination_id": first}]},
            },
        })
        steps["update"] = [failed, checkout(ready)["status"]]
        failed, shown = await tool(client, "get_checkout", {"meta": agent, "id": created["id"]})
        steps["get"] = [failed, checkout(shown)["status"]]

        mandate = mandate_for(shown, device, bound["id"], origin)
        complete = {
            "meta": dict(agent, **{"idempotency-key": str(uuid.uuid4())}),
            "id": created["id"],
            "checkout": {"ap2": {"checkout_mandate": mandate}},
        }
        failed, receipt = await tool(client, "complete_checkout", complete)
        if failed:
            sys.exit(f"complete refused: {receipt}")
        steps["complete"] = [failed, checkout(receipt)["status"]]
        placed = http_json("GET", receipt["order"]["permalink_url"])
        order.Order.model_validate(placed)
        steps["order"] = [placed["checkout_id"] == created["id"], placed["line_items"][0]["status"]]
        complete["meta"] = dict(agent, **{"idempotency-key": str(uuid.uuid4())})
        failed, replayed = await tool(client, "complete_checkout", complete)
        steps["replay"] = [failed, failure(replayed)["messages"][0]["code"]]
    return {"steps": steps, "order": receipt["order"]["id"]}


def main() -> None:
    print(json.dumps(asyncio.run(shop(sys.argv[1], sys.argv[2]))))


if __name__ == "__main__":
    main()
