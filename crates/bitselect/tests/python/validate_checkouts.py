"""Validates checkout objects with the commerce standard's own models.

Reads a JSON array of checkout objects on stdin and checks each against
the UCP Python SDK's checkout models as extended by fulfillment, discount
and AP2 mandates (each extension's model validates the whole object).
Prints a JSON array with one entry per object: true, or the validation
error as text.

Usage: validate_checkouts.py < checkouts.json
"""

import json
import sys

from pydantic import ValidationError
from ucp_sdk.models.schemas.common import payment_ap2_mandate
from ucp_sdk.models.schemas.shopping import discount, fulfillment

MODELS = (fulfillment.Checkout, discount.Checkout, payment_ap2_mandate.Checkout)


def verdict(checkout: object) -> object:
    try:
        for model in MODELS:
            model.model_validate(checkout)
    except ValidationError as error:
        return str(error)
    return True


def main() -> None:
    print(json.dumps([verdict(checkout) for checkout in json.load(sys.stdin)]))


if __name__ == "__main__":
    main()
