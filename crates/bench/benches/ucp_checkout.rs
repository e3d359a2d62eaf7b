//! The commerce standard's checkout, called on the shop directly: create,
//! update and complete with AP2 (the merchant signs every checkout, the
//! shopper's mandate is verified at completion), and the AP2 parts alone
//! (signing a checkout; verifying a mandate and the merchant signature in
//! it), so the cost without AP2 is the one less the other.

use ap2::jws::{self, SigningKey};
use ap2::mandate;
use bitselect::Shop;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

const ORIGIN: &str = "https://shop.example";
const IPHONE_17: &str = "MG6W4CH/A";

fn body(shop: &Shop) -> Value {
    let saved = shop.saved_addresses().unwrap();
    json!({
        "line_items": [{ "item": { "id": IPHONE_17 }, "quantity": 1 }],
        "discounts": { "codes": ["SHOP-5000-300"] },
        "fulfillment": { "methods": [{ "type": "shipping", "selected_destination_id": saved[0].id }] },
    })
}

fn checkout(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let shop = Shop::open(dir.path()).unwrap();
    // Enough stock for every completion the benchmark makes.
    shop.connection()
        .unwrap()
        .execute("UPDATE sku SET stock = 100000000", [])
        .unwrap();
    let device = SigningKey::generate().unwrap().0;
    let bound = shop.bind_device(&device.public_jwk(), None).unwrap();
    // The mandate names the key by the id the shop gave it.
    let device = device.with_kid(bound.id);
    let body = body(&shop);
    let mandate_for = |checkout: &Value| {
        let now = shop.now() / 1000;
        mandate::sign(&device, checkout, ORIGIN, now, now + 600).unwrap()
    };

    let mut group = c.benchmark_group("ucp");
    group.throughput(Throughput::Elements(1));
    group.bench_function("create_checkout", |b| {
        b.iter(|| shop.create_checkout(&body, None).unwrap())
    });
    let open = shop.create_checkout(&body, None).unwrap().value;
    let id = open["id"].as_str().unwrap().to_owned();
    group.bench_function("update_checkout", |b| {
        b.iter(|| shop.update_checkout(&id, &body, None).unwrap())
    });
    group.bench_function("complete_checkout", |b| {
        b.iter_batched(
            || {
                let checkout = shop.create_checkout(&body, None).unwrap().value;
                let mandate = mandate_for(&checkout);
                (checkout, mandate)
            },
            |(checkout, mandate)| {
                let id = checkout["id"].as_str().unwrap();
                shop.complete_checkout(id, Some(&mandate), ORIGIN, None)
                    .unwrap()
            },
            BatchSize::SmallInput,
        )
    });

    // The AP2 parts alone.
    let key = SigningKey::generate().unwrap().0;
    group.bench_function("ap2_sign_checkout", |b| {
        b.iter(|| jws::sign_checkout(&key, open.clone()).unwrap())
    });
    let keys = shop.signing_keys().unwrap();
    let mandate = mandate_for(&open);
    group.bench_function("ap2_verify_mandate", |b| {
        b.iter(|| {
            let verified =
                mandate::verify(&mandate, shop.now() / 1000, ORIGIN, &device.public_jwk()).unwrap();
            let shown = &verified.checkout;
            jws::verify_detached(
                shown["ap2"]["merchant_authorization"].as_str().unwrap(),
                &jws::checkout_payload(shown),
                &keys,
            )
            .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, checkout);
criterion_main!(benches);
