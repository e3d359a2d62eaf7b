//! The merchant's signature on a checkout: made by any instance, verified
//! with the keys every instance publishes, and still good across a key
//! rotation for as long as the checkout lives.

use crate::support::*;
use ap2::jws::{self, SignatureError};
use bitselect::ucp::signing_keys::CHECKOUT_LIFETIME_MS;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn checkout(total: i64) -> Value {
    json!({
        "id": "chk_1",
        "status": "ready_for_complete",
        "currency": "CNY",
        "line_items": [{"id": "li_1", "item": {"id": "MG6P4CH/A", "title": "AirPods Pro 3", "price": total}, "quantity": 1}],
        "totals": [{"type": "subtotal", "amount": total}, {"type": "total", "amount": total}],
    })
}

fn authorization(signed: &Value) -> &str {
    signed["ap2"]["merchant_authorization"].as_str().unwrap()
}

#[test]
fn a_checkout_signed_by_one_instance_verifies_with_the_keys_another_publishes() {
    let t = open_shop();
    let signed = t.shop.sign_checkout(checkout(189_900)).unwrap();

    let other_instance = t.reopen();
    let keys = other_instance.signing_keys().unwrap();
    assert_eq!(keys.len(), 1, "a second start makes no second key");
    assert_eq!(
        jws::verify_detached(
            authorization(&signed),
            &jws::checkout_payload(&signed),
            &keys
        ),
        Ok(())
    );
    let mut altered = signed.clone();
    altered["totals"][1]["amount"] = json!(1);
    assert_eq!(
        jws::verify_detached(
            authorization(&altered),
            &jws::checkout_payload(&altered),
            &keys
        ),
        Err(SignatureError::Invalid)
    );
}

#[test]
fn a_checkout_signed_before_a_rotation_verifies_until_it_would_have_expired() {
    let t = open_shop();
    let before = t.shop.sign_checkout(checkout(189_900)).unwrap();
    let new_key = t.shop.rotate_signing_key().unwrap();
    let after = t.shop.sign_checkout(checkout(189_900)).unwrap();
    assert!(
        authorization(&after).starts_with(&authorization(&before)[..10]),
        "same header shape"
    );
    assert_ne!(authorization(&after), authorization(&before));

    let verify = |signed: &Value| {
        jws::verify_detached(
            authorization(signed),
            &jws::checkout_payload(signed),
            &t.reopen().signing_keys().unwrap(),
        )
    };
    assert_eq!(verify(&before), Ok(()));
    assert_eq!(verify(&after), Ok(()));
    assert_eq!(t.shop.signing_keys().unwrap()[0], new_key, "newest first");

    t.clock.advance(CHECKOUT_LIFETIME_MS + 1);
    assert!(
        matches!(verify(&before), Err(SignatureError::KeyNotFound(_))),
        "the old key is no longer published"
    );
    assert_eq!(verify(&after), Ok(()));
    assert_eq!(t.shop.signing_keys().unwrap(), vec![new_key]);
}

#[test]
fn an_authorization_sent_in_is_replaced_by_the_merchants_own() {
    let t = open_shop();
    let mut offered = checkout(99_900);
    offered["ap2"] = json!({"merchant_authorization": "forged..forged"});
    let signed = t.shop.sign_checkout(offered).unwrap();
    assert_ne!(authorization(&signed), "forged..forged");
    assert_eq!(
        jws::verify_detached(
            authorization(&signed),
            &jws::checkout_payload(&signed),
            &t.shop.signing_keys().unwrap()
        ),
        Ok(())
    );
}

#[test]
fn the_operators_rotation_command_prints_the_key_every_instance_then_signs_with() {
    let t = open_shop();
    let before = t.shop.signing_keys().unwrap();
    let store_flags: Vec<String> = match &t.database {
        None => vec!["--data-dir".into(), t.dir.path().display().to_string()],
        Some(name) => vec!["--database-url".into(), postgres::cluster().url(name)],
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bitselect-mcp"))
        .arg("rotate-signing-key")
        .args(&store_flags)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: jws::Jwk = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(printed, before[0]);

    let signed = t.shop.sign_checkout(checkout(189_900)).unwrap();
    let header = authorization(&signed).split('.').next().unwrap();
    let header: Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, header).unwrap(),
    )
    .unwrap();
    assert_eq!(header, json!({"alg": "ES256", "kid": printed.kid}));
    assert_eq!(
        t.shop.signing_keys().unwrap(),
        vec![printed, before[0].clone()]
    );
}
