"""A platform's side of the shop's REST binding, checked by the standard.

Discovers the shop at URL (its `/.well-known/ucp` profile), then creates a
checkout, updates it with a shipping destination, reads an unknown one,
asks for an unknown item and cancels the checkout, through the REST
endpoint the profile names. Every answer is validated with the UCP Python
SDK's own models: the profile as a business profile, each checkout as the
checkout extended by fulfillment, discount, buyer consent and AP2
mandates (the buyer's marketing consent passed on and answered back as
theirs), each failure
as the standard's error response. A copy of a checkout with its subtotal
removed must fail validation, or the check proves nothing.

Prints one JSON object on stdout: the HTTP status and `status` of each
step and the checkout's id. Any validation failure or unexpected answer
ends the script with a non-zero status and the reason on stderr.

Every request names the platform's profile at PROFILE_URL (UCP-Agent).

Usage: ucp_rest_client.py URL PROFILE_URL SKU_CODE
"""

import json
import sys
import urllib.error
import urllib.request

from pydantic import ValidationError
from ucp_sdk.models.schemas import profile
from ucp_sdk.models.schemas.common import payment_ap2_mandate
from ucp_sdk.models.schemas.common.types import error_response
from ucp_sdk.models.schemas.shopping import buyer_consent, discount, fulfillment

CHECKOUT_MODELS = (
    fulfillment.Checkout,
    discount.Checkout,
    buyer_consent.Checkout,
    payment_ap2_mandate.Checkout,
)


PROFILE = ""


def call(method: str, url: str, body: object | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    request.add_header("UCP-Agent", f'profile="{PROFILE}"')
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def checkout(answer: dict) -> dict:
    for model in CHECKOUT_MODELS:
        model.model_validate(answer)
    return answer


def failure(answer: dict) -> dict:
    error_response.ErrorResponse.model_validate(answer)
    return answer


def main() -> None:
    global PROFILE
    base, PROFILE, sku = sys.argv[1], sys.argv[2], sys.argv[3]
    _, found = call("GET", f"{base}/.well-known/ucp")
    profile.BusinessSchema.model_validate(found)
    endpoint = found["ucp"]["services"]["dev.ucp.shopping"][0]["endpoint"]
    sessions = f"{endpoint}/checkout-sessions"
    steps = {}

    body = {
        "line_items": [{"item": {"id": sku}, "quantity": 1}],
        "buyer": {
            "first_name": "明", "last_name": "张", "email": "zhang@example.com",
            "consent": {"dev.ucp.consent.marketing": {"granted": True}},
        },
        "discounts": {"codes": ["SHOP-5000-300", "NOT-A-CODE"]},
    }
    status, created = call("POST", sessions, body)
    steps["create"] = [status, checkout(created)["status"]]
    marketing = created["buyer"]["consent"]["dev.ucp.consent.marketing"]
    steps["consent"] = [marketing["granted"], marketing["source"]]
    one = f"{sessions}/{created['id']}"

    body["discounts"] = {"codes": ["SHOP-5000-300"]}
    body["fulfillment"] = {"methods": [{
        "type": "shipping",
        "destinations": [{
            "id": "home", "first_name": "明", "last_name": "张",
            "phone_number": "13800138000", "address_country": "CN",
            "address_region": "上海市", "street_address": "世纪大道 100 号",
        }],
        "selected_destination_id": "home",
    }]}
    status, ready = call("PUT", one, body)
    steps["update"] = [status, checkout(ready)["status"]]

    broken = dict(ready, totals=[{"type": "total", "amount": 1}])
    try:
        checkout(broken)
        sys.exit("a checkout without a subtotal passed validation")
    except ValidationError:
        pass

    status, missing = call("GET", f"{sessions}/chk_unknown")
    steps["unknown"] = [status, failure(missing)["ucp"]["status"]]
    status, unavailable = call("POST", sessions, {
        "line_items": [{"item": {"id": "NO-SUCH-SKU"}, "quantity": 1}],
    })
    steps["unavailable"] = [status, failure(unavailable)["ucp"]["status"]]

    status, canceled = call("POST", f"{one}/cancel")
    steps["cancel"] = [status, checkout(canceled)["status"]]
    status, closed = call("PUT", one, body)
    steps["closed"] = [status, failure(closed)["ucp"]["status"]]

    print(json.dumps({"steps": steps, "id": created["id"]}))


if __name__ == "__main__":
    main()
