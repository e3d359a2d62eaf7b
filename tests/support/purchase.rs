//! The seed's purchase as the model proposes it: the iPhone 17 256GB
//! black into the cart, then ordered with the ¥300 coupon.

use serde_json::json;

use super::model::{Turn, tool_call};

pub const IPHONE: &str = "MG6W4CH/A";
pub const COUPON: &str = "SHOP-5000-300";

/// The two turns of the purchase: the cart, then the order.
pub fn seed_purchase() -> Vec<Turn> {
    vec![
        tool_call(
            "call_cart",
            "bitselect__update_cart_item",
            json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
        ),
        tool_call(
            "call_order",
            "bitselect__create_order",
            json!({"items": [{"skuCode": IPHONE, "quantity": 1}], "couponCode": COUPON}),
        ),
    ]
}
