//! A purchase through the commerce standard's checkout, in process: what a
//! platform with every capability does, its order webhook as given.

use bitselect::Shop;
use bitselect::ucp::negotiation::{Active, shop_capabilities};
use serde_json::json;

use super::mandate::{Device, SHOP_ORIGIN};
use super::{IPHONE_17, TestShop};

/// The shop as a platform with every capability sees it, its order
/// webhook `webhook`.
pub fn negotiated(shop: &Shop, webhook: Option<&str>) -> Shop {
    shop.negotiated(Active {
        names: shop_capabilities().map(str::to_owned).collect(),
        order_webhook: webhook.map(str::to_owned),
    })
}

/// One iPhone 17 bought through a checkout, shipped to the first saved
/// address, by a platform whose order webhook is `webhook`, with a device
/// key bound for the purpose; the order's number.
pub fn bought_through_checkout(t: &TestShop, webhook: Option<&str>) -> String {
    let device = Device::new();
    t.shop
        .bind_device(&device.jwk(), None)
        .expect("bind a device key");
    let saved = t.shop.saved_addresses().expect("saved addresses");
    let platform = negotiated(&t.shop, webhook);
    let body = json!({
        "line_items": [{ "item": { "id": IPHONE_17 }, "quantity": 1 }],
        "fulfillment": { "methods": [{
            "type": "shipping", "selected_destination_id": saved[0].id,
        }]},
    });
    let checkout = platform
        .create_checkout(&body, None)
        .expect("a checkout")
        .value;
    let mandate = device.mandate(&checkout, t.shop.now());
    let receipt = platform
        .complete_checkout(
            checkout["id"].as_str().expect("an id"),
            Some(&mandate),
            SHOP_ORIGIN,
            None,
        )
        .expect("completed")
        .value;
    receipt["order"]["id"]
        .as_str()
        .expect("the order's number")
        .to_owned()
}
