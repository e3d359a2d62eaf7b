//! The seeded demo data: every record, seeded once, at times relative to
//! the clock.

use crate::support::*;
use bitselect::ShopStats;
use pretty_assertions::assert_eq;

#[test]
fn the_seed_has_every_record_of_the_demo_data() {
    let t = open_shop();
    assert_eq!(
        t.shop.stats().unwrap(),
        ShopStats {
            models: 695,
            skus: 1420,
            coupons: 7,
            held_coupons: 7,
            cart_lines: 5,
            orders: 8,
            order_lines: 11,
            parcels: 5,
            parcel_events: 18,
            after_sales: 2,
            tickets: 0,
        }
    );
}

#[test]
fn seeding_happens_once_even_when_reopened_later() {
    let t = open_shop();
    let before = t.shop.query_order(&one_order("88236")).unwrap();
    t.clock.advance(DAY);
    let reopened = t.reopen();
    assert_eq!(reopened.stats().unwrap().orders, 8);
    let after = reopened.query_order(&one_order("88236")).unwrap();
    assert_eq!(after.orders[0].created_at, before.orders[0].created_at);
}

#[test]
fn relative_times_are_resolved_against_the_clock_at_seeding() {
    let t = open_shop();
    let order = &t.shop.query_order(&one_order("88236")).unwrap().orders[0];
    // T0 is 20:00 in Shanghai; 88236 was created 3 minutes before.
    assert_eq!(order.created_at, "2026-11-29T19:57:00+08:00");
    assert_eq!(order.paid_at, None);
}

#[test]
fn order_88233_carries_the_edu_coupon_discount_in_exact_fen() {
    let t = open_shop();
    let order = &t.shop.query_order(&one_order("88233")).unwrap().orders[0];
    assert_eq!(order.total_amount_fen, 999_900);
    assert_eq!(order.discount_amount_fen, 79_992);
    assert_eq!(order.pay_amount_fen, 919_908);
    assert_eq!(order.pay_amount.to_string(), "9199.08");
    assert_eq!(order.coupon_code.as_deref(), Some("EDU-MAC-920"));
}

/// A load-test user as seeded: subject, cart lines (SKU, quantity), coupons.
type LoadUser = (String, Vec<(String, i64)>, Vec<String>);

/// Each load-test user's cart lines and coupons, by subject.
fn load_users(shop: &bitselect::Shop, count: u32) -> Vec<LoadUser> {
    (1..=count)
        .map(|n| {
            let sub = bitselect::load_users::load_sub(n);
            let user = shop.find_user(&sub).unwrap().expect("seeded user");
            let theirs = shop.acting_for(user);
            let lines = theirs
                .query_cart()
                .unwrap()
                .lines
                .into_iter()
                .map(|l| (l.sku_code, l.quantity))
                .collect();
            let coupons = theirs
                .query_coupons(&Default::default())
                .unwrap()
                .coupons
                .into_iter()
                .map(|c| c.code)
                .collect();
            (sub, lines, coupons)
        })
        .collect()
}

#[test]
fn seeding_load_users_is_deterministic_and_leaves_existing_users_alone() {
    let (one, two) = (open_shop(), open_shop());
    let first = one.shop.seed_users(4).unwrap();
    assert_eq!((first.created, first.existing), (4, 0));
    two.shop.seed_users(4).unwrap();
    let users = load_users(&one.shop, 4);
    assert_eq!(users, load_users(&two.shop, 4));
    for (sub, lines, coupons) in &users {
        assert_eq!(lines.len(), 3, "{sub}");
        assert_eq!(coupons.len(), 1, "{sub}");
    }

    // User 1 changes their cart; seeding again keeps the change.
    let user = one.shop.find_user("load-00001").unwrap().unwrap();
    let theirs = one.shop.acting_for(user);
    let (sku, _) = users[0].1[0].clone();
    theirs
        .update_cart_item(&add(&sku, 1), None)
        .expect("add another unit");
    let again = one.shop.seed_users(6).unwrap();
    assert_eq!((again.created, again.existing), (2, 4));
    assert_eq!(cart_quantity(&theirs, &sku), 2);
    assert_eq!(
        one.shop.query_cart().unwrap().lines.len(),
        5,
        "the demo cart"
    );
}
