//! Saved addresses: the distinct receivers of the shopper's orders, which
//! `create_order` offers when there is more than one and the call names
//! none, and an order sent to the one chosen.

use crate::support::*;
use bitselect::params::CreateOrderParams;
use pretty_assertions::assert_eq;

const SEED_TITLE: &str = "张明 138****8000 上海市浦东新区张江镇科苑路 88 号 3 号楼 501 室";
const LI_LEI_TITLE: &str = "李雷 137****7000 北京市海淀区中关村大街 1 号";

fn titles(t: &TestShop) -> Vec<String> {
    t.shop
        .saved_addresses()
        .unwrap()
        .into_iter()
        .map(|a| a.title)
        .collect()
}

#[test]
fn the_saved_addresses_are_the_orders_distinct_receivers_the_latest_first() {
    let t = open_shop();
    assert_eq!(titles(&t), [SEED_TITLE], "eight seed orders, one receiver");
    let t = shop_with_two_addresses();
    assert_eq!(titles(&t), [LI_LEI_TITLE, SEED_TITLE]);
}

#[test]
fn two_addresses_that_differ_only_in_the_hidden_digits_show_the_whole_phone() {
    let t = shop_with_two_addresses();
    let p = CreateOrderParams {
        receiver_phone: Some("13799997000".into()),
        ..to_li_lei(&[(IPHONE_17, 1)])
    };
    t.clock.advance(MINUTE);
    t.shop.create_order(&p, None).unwrap();
    assert_eq!(
        titles(&t),
        [
            "李雷 13799997000 北京市海淀区中关村大街 1 号",
            "李雷 13700137000 北京市海淀区中关村大街 1 号",
            SEED_TITLE
        ]
    );
}

#[test]
fn an_order_naming_no_receiver_is_offered_the_saved_addresses_with_its_amount() {
    let t = shop_with_two_addresses();
    let offer = t
        .shop
        .address_offer(&order(&[(IPHONE_17, 2)]))
        .unwrap()
        .expect("two addresses to choose from");
    let offered: Vec<&str> = offer.addresses.iter().map(|a| a.title.as_str()).collect();
    assert_eq!(offered, [LI_LEI_TITLE, SEED_TITLE]);
    assert_eq!((offer.units, offer.pay), (2, 2 * 679_900));
}

#[test]
fn nothing_is_offered_with_one_address_a_named_receiver_or_an_order_that_would_be_refused() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    assert_eq!(
        t.shop.address_offer(&order(&[(IPHONE_17, 1)])).unwrap(),
        None
    );

    let t = shop_with_two_addresses();
    let named = CreateOrderParams {
        receiver_name: Some("王芳".into()),
        ..order(&[(IPHONE_17, 1)])
    };
    assert_eq!(t.shop.address_offer(&named).unwrap(), None);
    assert_eq!(
        t.shop.address_offer(&order(&[(IPAD_AIR, 1)])).unwrap(),
        None,
        "not in the cart: refused as before, unasked"
    );
}

#[test]
fn an_order_sent_to_the_chosen_address_goes_there_and_its_key_returns_it_again() {
    let t = shop_with_two_addresses();
    let p = order(&[(IPHONE_17, 1)]);
    let seed = t.shop.saved_addresses().unwrap().remove(1);
    assert_eq!(seed.title, SEED_TITLE);

    let placed = t
        .shop
        .create_order_to(&p, &seed.id, Some("call-7"))
        .unwrap();
    assert!(!placed.replayed);
    assert_eq!(placed.value.receiver, seed.receiver);
    assert_eq!(placed.value.order_no, "88240");

    let li_lei = t.shop.saved_addresses().unwrap().remove(1);
    let again = t
        .shop
        .create_order_to(&p, &li_lei.id, Some("call-7"))
        .unwrap();
    assert!(again.replayed, "the same call sent again");
    assert_eq!(again.value, placed.value);
    let found = t
        .shop
        .replay::<_, bitselect::orders::OrderView>("create_order", &p, "call-7")
        .unwrap()
        .expect("the key's first order");
    assert_eq!(found.value, placed.value);
    assert_eq!(t.shop.stats().unwrap().orders, 10);
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 1);
}

#[test]
fn an_address_no_longer_saved_is_refused_and_nothing_is_placed() {
    let t = shop_with_two_addresses();
    let refused = t.shop.create_order_to(
        &order(&[(IPHONE_17, 1)]),
        "0123456789abcdef",
        Some("call-8"),
    );
    assert_eq!(refusal_code(refused), "UNKNOWN_SAVED_ADDRESS");
    assert_eq!(t.shop.stats().unwrap().orders, 9);
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 2);
    assert!(
        t.shop
            .replay::<_, bitselect::orders::OrderView>(
                "create_order",
                &order(&[(IPHONE_17, 1)]),
                "call-8"
            )
            .unwrap()
            .is_none(),
        "a refused call keeps no key"
    );
}

#[test]
fn the_order_preview_offers_the_saved_addresses_when_the_order_will_ask_for_one() {
    let t = shop_with_two_addresses();
    let asking = t
        .shop
        .preview_create_order_asking(&order(&[(IPHONE_17, 1)]))
        .unwrap();
    assert_eq!(
        asking.address, None,
        "no address is chosen before the shopper answers"
    );
    let streets: Vec<&str> = asking
        .address_choices
        .iter()
        .map(|a| a.receiver_address.as_str())
        .collect();
    assert_eq!(
        streets,
        [
            "北京市海淀区中关村大街 1 号",
            "上海市浦东新区张江镇科苑路 88 号 3 号楼 501 室"
        ]
    );

    // A caller that cannot be asked: the latest receiver, no choices.
    let unasked = t
        .shop
        .preview_create_order(&order(&[(IPHONE_17, 1)]))
        .unwrap();
    assert_eq!(
        unasked.address.map(|a| a.receiver_name),
        Some("李雷".to_owned())
    );
    assert!(unasked.address_choices.is_empty());

    // A named receiver is where it goes, asked or not.
    let named = t
        .shop
        .preview_create_order_asking(&to_li_lei(&[(IPHONE_17, 1)]))
        .unwrap();
    assert!(named.address_choices.is_empty());
    assert_eq!(
        named.address.map(|a| a.receiver_name),
        Some("李雷".to_owned())
    );
}
