//! Device keys: bound to a user once per fresh sign-in, refused when
//! malformed, another user's or revoked, and unusable once revoked.

use crate::support::*;
use ap2::jws::SigningKey;
use bitselect::ucp::devices::{BIND_WINDOW_SECS, BindingToken, MAX_DEVICES};
use pretty_assertions::assert_eq;

fn new_key() -> ap2::jws::Jwk {
    SigningKey::generate().unwrap().0.public_jwk()
}

fn token(id: &str, issued_at_ms: i64) -> BindingToken<'_> {
    BindingToken {
        id: Some(id),
        issued_at_secs: Some(issued_at_ms / 1000),
    }
}

#[test]
fn a_fresh_token_binds_one_key_and_never_another() {
    let t = open_shop();
    let key = new_key();
    let device = t.shop.bind_device(&key, Some(token("t1", T0))).unwrap();
    assert_eq!(
        device.id,
        format!("bitselect-{}", key.thumbprint().unwrap()),
        "the id is the key's thumbprint"
    );
    assert_eq!(
        (device.jwk.x.as_str(), device.jwk.y.as_str()),
        (key.x.as_str(), key.y.as_str())
    );
    assert_eq!(
        refusal_code(t.shop.bind_device(&new_key(), Some(token("t1", T0)))),
        "DEVICE_BINDING_REFUSED",
        "a token binds once"
    );
    // The same key again is the same device, and uses up no token.
    assert_eq!(
        t.shop.bind_device(&key, Some(token("t2", T0))).unwrap(),
        device
    );
    t.shop
        .bind_device(&new_key(), Some(token("t2", T0)))
        .unwrap();

    t.clock.advance((BIND_WINDOW_SECS + 1) * 1000);
    assert_eq!(
        refusal_code(t.shop.bind_device(&new_key(), Some(token("t3", T0)))),
        "DEVICE_BINDING_REFUSED",
        "only right after sign-in"
    );
    let no_id = BindingToken {
        id: None,
        issued_at_secs: Some(t.shop.now() / 1000),
    };
    assert_eq!(
        refusal_code(t.shop.bind_device(&new_key(), Some(no_id))),
        "DEVICE_BINDING_REFUSED"
    );
    // A shop without sign-in binds for its one user.
    t.shop.bind_device(&new_key(), None).unwrap();
}

#[test]
fn a_malformed_key_another_users_or_a_revoked_one_is_refused() {
    let t = open_shop();
    let mut bent = new_key();
    bent.x = "AAAA".into();
    assert_eq!(
        refusal_code(t.shop.bind_device(&bent, None)),
        "DEVICE_BINDING_REFUSED"
    );
    let mut rsa = new_key();
    rsa.kty = "RSA".into();
    assert_eq!(
        refusal_code(t.shop.bind_device(&rsa, None)),
        "DEVICE_BINDING_REFUSED"
    );

    let key = new_key();
    let device = t.shop.bind_device(&key, None).unwrap();
    let other = t.shop.user_for_subject("someone-else", "别人").unwrap();
    let theirs = t.shop.acting_for(other);
    assert_eq!(
        refusal_code(theirs.bind_device(&key, None)),
        "DEVICE_BINDING_REFUSED"
    );
    assert_eq!(
        refusal_code(theirs.revoke_device(&device.id)),
        "UNKNOWN_DEVICE"
    );

    t.shop.revoke_device(&device.id).unwrap();
    assert_eq!(
        refusal_code(t.shop.revoke_device(&device.id)),
        "UNKNOWN_DEVICE"
    );
    assert_eq!(
        refusal_code(t.shop.bind_device(&key, None)),
        "DEVICE_BINDING_REFUSED",
        "a revoked key stays revoked"
    );
}

#[test]
fn a_user_binds_at_most_ten_devices_at_once() {
    let t = open_shop();
    let mut bound = Vec::new();
    for _ in 0..MAX_DEVICES {
        bound.push(t.shop.bind_device(&new_key(), None).unwrap());
    }
    assert_eq!(
        refusal_code(t.shop.bind_device(&new_key(), None)),
        "DEVICE_BINDING_REFUSED"
    );
    t.shop.revoke_device(&bound[0].id).unwrap();
    t.shop.bind_device(&new_key(), None).unwrap();
}
