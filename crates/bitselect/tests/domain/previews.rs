//! The previews of the writes: what each would do, from the same plan the
//! write commits, without changing anything.

use crate::support::*;
use bitselect::Shop;
use bitselect::params::{
    AfterSaleType, ApplyAfterSaleParams, CancelOrderParams, CartAction, ChangeAddressParams,
    PayOrderParams, UpdateCartItemParams,
};
use bitselect::preview::{Address, Preview, PreviewLine, Total, TotalKind, Warning};
use pretty_assertions::assert_eq;
use serde_json::json;

fn pay(no: &str) -> PayOrderParams {
    PayOrderParams {
        order_no: no.into(),
    }
}

fn cancel(no: &str) -> CancelOrderParams {
    CancelOrderParams {
        order_no: no.into(),
        reason: None,
    }
}

fn new_receiver(no: &str) -> ChangeAddressParams {
    ChangeAddressParams {
        order_no: no.into(),
        receiver_name: Some("李雷".into()),
        receiver_phone: None,
        receiver_address: Some("北京市海淀区中关村大街 1 号".into()),
    }
}

fn after_sale(no: &str, sku: &str, kind: AfterSaleType) -> ApplyAfterSaleParams {
    ApplyAfterSaleParams {
        order_no: no.into(),
        sku_code: sku.into(),
        kind,
        reason: "不喜欢这个颜色".into(),
    }
}

fn total(preview: &Preview, kind: TotalKind) -> Option<i64> {
    preview
        .totals
        .iter()
        .find(|t| t.kind == kind)
        .map(|t| t.amount_fen)
}

fn blocking_codes(preview: &Preview) -> Vec<&str> {
    preview
        .warnings
        .iter()
        .filter(|w| w.blocking)
        .map(|w| w.code.as_str())
        .collect()
}

/// Everything a write could change, as the tools show it.
fn state(shop: &Shop) -> String {
    let orders = shop
        .query_order(&bitselect::params::QueryOrderParams {
            limit: Some(20),
            ..Default::default()
        })
        .unwrap();
    let after_sales = shop.query_after_sale(&Default::default()).unwrap();
    let coupons = shop.query_coupons(&Default::default()).unwrap();
    let stocks: Vec<i64> = [
        IPHONE_17,
        IPAD_AIR,
        VISION_PRO_3_LEFT,
        "MFE94CH/A",
        "MJF54CH/B",
    ]
    .iter()
    .map(|sku| stock(shop, sku))
    .collect();
    serde_json::to_string(&json!([
        shop.stats().unwrap(),
        shop.query_cart().unwrap(),
        orders,
        after_sales,
        coupons,
        stocks
    ]))
    .unwrap()
}

#[test]
fn preview_create_order_shows_names_prices_coupon_and_amount_to_pay() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let preview = t
        .shop
        .preview_create_order(&order_with_coupon(&[(IPHONE_17, 1)], "SHOP-5000-300"))
        .unwrap();
    assert_eq!(
        preview,
        Preview {
            summary: "提交订单：1 件商品，应付 ¥6,499.00".into(),
            lines: vec![PreviewLine {
                name: "iPhone 17".into(),
                spec: Some("256GB 黑色".into()),
                code: Some(IPHONE_17.into()),
                unit_price_fen: Some(679_900),
                quantity: 1,
                quantity_before: None,
                subtotal_fen: Some(679_900),
                stock_left: Some(9),
                note: None,
            }],
            totals: vec![
                Total {
                    kind: TotalKind::Goods,
                    label: Some("商品金额".into()),
                    amount_fen: 679_900
                },
                Total {
                    kind: TotalKind::Discount,
                    label: Some("店铺满减券（SHOP-5000-300）".into()),
                    amount_fen: -30_000
                },
                Total {
                    kind: TotalKind::Pay,
                    label: Some("应付".into()),
                    amount_fen: 649_900
                },
            ],
            address: Some(Address {
                receiver_name: "张明".into(),
                receiver_phone: "13800138000".into(),
                receiver_address: "上海市浦东新区张江镇科苑路 88 号 3 号楼 501 室".into(),
            }),
            address_before: None,
            address_choices: vec![],
            warnings: vec![],
        }
    );
    // The wire shape: camelCase, absent fields left out, money in fen.
    let wire = serde_json::to_value(&preview).unwrap();
    assert_eq!(
        wire["lines"][0],
        json!({"name": "iPhone 17", "spec": "256GB 黑色", "code": IPHONE_17,
               "unitPriceFen": 679_900, "quantity": 1, "subtotalFen": 679_900, "stockLeft": 9})
    );
    assert_eq!(wire["address"]["receiverName"], "张明");
    assert!(wire.get("addressBefore").is_none());
}

#[test]
fn a_preview_changes_nothing() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 2), None).unwrap();
    let before = state(&t.shop);
    let s = &t.shop;
    s.preview_update_cart_item(&add(IPAD_AIR, 1)).unwrap();
    s.preview_create_order(&order_with_coupon(&[(IPHONE_17, 2)], "SHOP-5000-300"))
        .unwrap();
    s.preview_pay_order(&pay("88236")).unwrap();
    s.preview_cancel_order(&cancel("88235")).unwrap();
    s.preview_change_address(&new_receiver("88236")).unwrap();
    s.preview_apply_after_sale(&after_sale("88231", IPHONE_17, AfterSaleType::ReturnRefund))
        .unwrap();
    assert_eq!(state(&t.shop), before);
}

#[test]
fn a_preview_and_its_write_agree_on_every_amount() {
    let t = open_shop();
    let s = &t.shop;

    let cart = s.preview_update_cart_item(&add(IPHONE_17, 2)).unwrap();
    let added = s.update_cart_item(&add(IPHONE_17, 2), None).unwrap().value;
    assert_eq!(
        total(&cart, TotalKind::Cart),
        Some(added.cart.orderable_total_fen)
    );
    assert_eq!(cart.lines[0].quantity, added.quantity);

    let params = order_with_coupon(&[(IPHONE_17, 2)], "SHOP-5000-300");
    let preview = s.preview_create_order(&params).unwrap();
    let placed = s.create_order(&params, None).unwrap().value;
    assert_eq!(
        total(&preview, TotalKind::Goods),
        Some(placed.total_amount_fen)
    );
    assert_eq!(
        total(&preview, TotalKind::Discount),
        Some(-placed.discount_amount_fen)
    );
    assert_eq!(total(&preview, TotalKind::Pay), Some(placed.pay_amount_fen));
    assert_eq!(preview.lines[0].stock_left, Some(stock(s, IPHONE_17)));

    let preview = s.preview_pay_order(&pay(&placed.order_no)).unwrap();
    let paid = s.pay_order(&pay(&placed.order_no), None).unwrap().value;
    assert_eq!(total(&preview, TotalKind::Pay), Some(paid.paid_amount_fen));

    let preview = s
        .preview_change_address(&new_receiver(&placed.order_no))
        .unwrap();
    let changed = s
        .change_address(&new_receiver(&placed.order_no), None)
        .unwrap()
        .value;
    let after = preview.address.unwrap();
    assert_eq!(after.receiver_name, changed.receiver.name);
    assert_eq!(after.receiver_address, changed.receiver.address);
    assert_eq!(preview.address_before.unwrap().receiver_name, "张明");

    let preview = s.preview_cancel_order(&cancel(&placed.order_no)).unwrap();
    let cancelled = s
        .cancel_order(&cancel(&placed.order_no), None)
        .unwrap()
        .value;
    assert_eq!(
        total(&preview, TotalKind::Refund),
        Some(cancelled.refund_amount_fen)
    );
    assert_eq!(cancelled.refund_amount_fen, 1_329_800);
    assert_eq!(preview.lines[0].stock_left, Some(stock(s, IPHONE_17)));

    // 88238: 9999 + 399 with 800 off; returning the case refunds its share.
    t.clock.set(T0 - 20 * DAY);
    let back = after_sale("88238", "MK8T4FE/A", AfterSaleType::ReturnRefund);
    let preview = s.preview_apply_after_sale(&back).unwrap();
    let applied = s.apply_after_sale(&back, None).unwrap().value;
    assert_eq!(
        total(&preview, TotalKind::Refund),
        applied.refund_amount_fen
    );
    assert_eq!(applied.refund_amount_fen, Some(39_900 - 3_070));
}

#[test]
fn the_preview_changes_when_the_price_changes() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let params = order(&[(IPHONE_17, 1)]);
    let at_card = serde_json::to_string(&t.shop.preview_create_order(&params).unwrap()).unwrap();
    assert_eq!(
        serde_json::to_string(&t.shop.preview_create_order(&params).unwrap()).unwrap(),
        at_card,
        "nothing changed, the same bytes"
    );
    t.clock.advance(DAY);
    assert_eq!(
        serde_json::to_string(&t.shop.preview_create_order(&params).unwrap()).unwrap(),
        at_card,
        "time passing alone changes nothing shown"
    );
    t.set_sku(IPHONE_17, "price_fen", 699_900);
    let now = t.shop.preview_create_order(&params).unwrap();
    assert_ne!(serde_json::to_string(&now).unwrap(), at_card);
    assert_eq!(total(&now, TotalKind::Pay), Some(699_900));
    assert_eq!(now.lines[0].note.as_deref(), Some("加入购物车时 ¥6,799.00"));
    assert_eq!(
        now.warnings,
        [Warning {
            code: "PRICE_CHANGED".into(),
            message: "iPhone 17 256GB 黑色 现价 ¥6,999.00，加入购物车时 ¥6,799.00（涨价 ¥200.00）"
                .into(),
            hint: None,
            blocking: false,
        }]
    );
    assert!(!now.is_blocked(), "a new price is news, not a refusal");
}

#[test]
fn stock_taken_by_someone_else_shows_as_a_blocking_warning() {
    let t = open_shop();
    t.shop
        .update_cart_item(&add(VISION_PRO_3_LEFT, 1), None)
        .unwrap();
    let params = order(&[(VISION_PRO_3_LEFT, 2)]);
    // The cart holds 2 (1 from the seed, 1 added); another shopper takes 2 of 3.
    t.set_sku(VISION_PRO_3_LEFT, "stock", 1);
    let preview = t.shop.preview_create_order(&params).unwrap();
    let refused = t.shop.create_order(&params, None).unwrap_err();
    assert_eq!(blocking_codes(&preview), ["INSUFFICIENT_STOCK"]);
    // The shopper's sentence on the card, the model's next step beside it.
    assert_eq!(preview.warnings[0].message, refused.for_shopper());
    assert_eq!(preview.warnings[0].hint, refused.hint());
    let said = &preview.warnings[0].message;
    assert!(said.ends_with("库存不足：需要 2 件，仅剩 1 件"), "{said}");
    assert!(
        !said.contains(VISION_PRO_3_LEFT),
        "a name, not a code: {said}"
    );
    assert_eq!(preview.lines[0].stock_left, Some(1));
    assert_eq!(
        preview.summary,
        format!("当前无法执行：{}", refused.for_shopper()),
        "the headline names what stops the order, not an amount to pay"
    );
    assert!(!preview.summary.contains("应付"), "{}", preview.summary);
}

#[test]
fn every_reason_an_order_would_be_refused_is_listed_in_the_writes_words() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let params = order_with_coupon(
        &[(IPHONE_17, 2), (IPAD_AIR, 1), (AIRPODS_NO_STOCK, 1)],
        "ACC-500-50",
    );
    let preview = t.shop.preview_create_order(&params).unwrap();
    assert_eq!(
        blocking_codes(&preview),
        [
            "CART_QUANTITY_SHORT",
            "NOT_IN_CART",
            "OUT_OF_STOCK",
            "COUPON_CATEGORY_MISMATCH"
        ]
    );
    let refused = t.shop.create_order(&params, None).unwrap_err();
    assert_eq!(
        preview.warnings[0].message,
        refused.for_shopper(),
        "the first is the write's"
    );
    assert_eq!(preview.lines.len(), 3, "the card still shows every line");
    assert!(
        preview.warnings[3].message.contains("仅限「配件」类商品"),
        "{}",
        preview.warnings[3].message
    );
    let not_held = t
        .shop
        .preview_create_order(&order_with_coupon(&[(IPHONE_17, 1)], "NOPE-1"))
        .unwrap();
    assert_eq!(blocking_codes(&not_held), ["COUPON_NOT_HELD"]);
}

#[test]
fn an_unknown_order_or_sku_previewed_answers_as_the_write_would() {
    let t = open_shop();
    let s = &t.shop;
    let pairs = [
        (
            s.preview_pay_order(&pay("99999")).unwrap_err(),
            s.pay_order(&pay("99999"), None).unwrap_err(),
        ),
        (
            s.preview_cancel_order(&cancel("99999")).unwrap_err(),
            s.cancel_order(&cancel("99999"), None).unwrap_err(),
        ),
        (
            s.preview_change_address(&new_receiver("99999"))
                .unwrap_err(),
            s.change_address(&new_receiver("99999"), None).unwrap_err(),
        ),
        (
            s.preview_apply_after_sale(&after_sale("88231", IPAD_AIR, AfterSaleType::Exchange))
                .unwrap_err(),
            s.apply_after_sale(
                &after_sale("88231", IPAD_AIR, AfterSaleType::Exchange),
                None,
            )
            .unwrap_err(),
        ),
        (
            s.preview_update_cart_item(&add("NOPE-1", 1)).unwrap_err(),
            s.update_cart_item(&add("NOPE-1", 1), None).unwrap_err(),
        ),
        (
            s.preview_create_order(&order(&[(IPHONE_17, 0)]))
                .unwrap_err(),
            s.create_order(&order(&[(IPHONE_17, 0)]), None).unwrap_err(),
        ),
    ];
    let codes: Vec<&str> = pairs.iter().map(|(preview, _)| preview.code()).collect();
    assert_eq!(
        codes,
        [
            "UNKNOWN_ORDER",
            "UNKNOWN_ORDER",
            "UNKNOWN_ORDER",
            "NOT_IN_ORDER",
            "UNKNOWN_SKU",
            "INVALID_ARGUMENT"
        ]
    );
    for (preview, write) in &pairs {
        assert_eq!(preview.code(), write.code());
        assert_eq!(preview.to_string(), write.to_string());
    }
}

#[test]
fn the_cart_preview_shows_the_line_before_and_after_and_the_cart_total() {
    let t = open_shop();
    let orderable = t.shop.query_cart().unwrap().orderable_total_fen;
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    t.set_sku(IPHONE_17, "price_fen", 659_900);
    let preview = t.shop.preview_update_cart_item(&add(IPHONE_17, 2)).unwrap();
    let line = &preview.lines[0];
    assert_eq!((line.quantity_before, line.quantity), (Some(1), 3));
    assert_eq!(line.unit_price_fen, Some(659_900));
    assert_eq!(line.subtotal_fen, Some(3 * 659_900));
    assert_eq!(line.stock_left, Some(10));
    assert_eq!(
        total(&preview, TotalKind::Cart),
        Some(orderable + 3 * 659_900)
    );
    assert_eq!(
        preview.summary,
        "加入购物车：iPhone 17 256GB 黑色 ×2，购物车中 1 → 3 件"
    );
    assert_eq!(preview.warnings.len(), 1);
    assert_eq!(preview.warnings[0].code, "PRICE_CHANGED");

    let removing = t
        .shop
        .preview_update_cart_item(&UpdateCartItemParams {
            sku_code: IPHONE_17.into(),
            action: CartAction::Remove,
            quantity: None,
        })
        .unwrap();
    assert_eq!(
        (
            removing.lines[0].quantity_before,
            removing.lines[0].quantity
        ),
        (Some(1), 0)
    );
    assert_eq!(total(&removing, TotalKind::Cart), Some(orderable));

    let delisted = t
        .shop
        .preview_update_cart_item(&add(IPHONE_16_DELISTED, 1))
        .unwrap();
    assert_eq!(blocking_codes(&delisted), ["SKU_DELISTED"]);
    let more_than_stock = t
        .shop
        .preview_update_cart_item(&add(VISION_PRO_3_LEFT, 3))
        .unwrap();
    assert_eq!(blocking_codes(&more_than_stock), Vec::<&str>::new());
    assert_eq!(
        more_than_stock.warnings[0].code, "STOCK_SHORT",
        "the write adds, and says so"
    );
}

#[test]
fn order_previews_show_the_charge_the_refund_and_the_coupon_coming_back() {
    let t = open_shop();
    let s = &t.shop;
    let to_pay = s.preview_pay_order(&pay("88236")).unwrap();
    assert_eq!(to_pay.summary, "支付订单 88236：¥498.00（模拟支付）");
    assert_eq!(total(&to_pay, TotalKind::Pay), Some(49_800));
    assert_eq!(to_pay.lines[0].name, "AirTag");
    assert_eq!(to_pay.lines[0].spec.as_deref(), Some("单件装"));
    let paid_already = s.preview_pay_order(&pay("88235")).unwrap();
    assert_eq!(blocking_codes(&paid_already), ["ORDER_STATUS"]);

    let paid = s.preview_cancel_order(&cancel("88235")).unwrap();
    assert_eq!(total(&paid, TotalKind::Refund), Some(337_800));
    assert_eq!(paid.lines[1].name, "Black Unity 回环式运动表带 - 团结之韵");
    assert_eq!(paid.lines[1].spec.as_deref(), Some("42 毫米"));
    let unpaid = s.preview_cancel_order(&cancel("88236")).unwrap();
    assert_eq!(unpaid.totals, []);
    assert_eq!(unpaid.summary, "取消订单 88236（尚未支付，无需退款）");
    let shipped = s.preview_cancel_order(&cancel("88234")).unwrap();
    assert_eq!(blocking_codes(&shipped), ["ORDER_STATUS"]);

    s.update_cart_item(&add(IPAD_AIR, 1), None).unwrap();
    let placed = s
        .create_order(&order_with_coupon(&[(IPAD_AIR, 1)], "EDU-PAD-920"), None)
        .unwrap()
        .value;
    let with_coupon = s.preview_cancel_order(&cancel(&placed.order_no)).unwrap();
    assert_eq!(
        with_coupon.warnings,
        [Warning {
            code: "COUPON_RETURNED".into(),
            message: "优惠券 EDU-PAD-920 将退回，可再次使用".into(),
            hint: None,
            blocking: false,
        }]
    );
    let to_pay = s.preview_pay_order(&pay(&placed.order_no)).unwrap();
    assert_eq!(
        to_pay.totals[1].label.as_deref(),
        Some("教育优惠·iPad（EDU-PAD-920）")
    );

    let shipped = s.preview_change_address(&new_receiver("88234")).unwrap();
    assert_eq!(blocking_codes(&shipped), ["ORDER_STATUS"]);
    let before = shipped.address_before.expect("the receiver before");
    let after = shipped.address.expect("the receiver after");
    assert_eq!(
        (before.receiver_name.as_str(), after.receiver_name.as_str()),
        ("张明", "李雷")
    );
    assert_eq!(
        before.receiver_phone, after.receiver_phone,
        "a field not given stays"
    );
}

#[test]
fn after_sale_previews_refund_a_return_and_list_what_stands_in_the_way() {
    let t = open_shop();
    let s = &t.shop;
    let back = s
        .preview_apply_after_sale(&after_sale("88231", IPHONE_17, AfterSaleType::ReturnRefund))
        .unwrap();
    assert_eq!(total(&back, TotalKind::Refund), Some(679_900));
    assert_eq!(back.lines[0].name, "iPhone 17");
    assert_eq!(back.warnings, []);
    let swap = s
        .preview_apply_after_sale(&after_sale("88231", IPHONE_17, AfterSaleType::Exchange))
        .unwrap();
    assert_eq!(swap.totals, []);
    let late = s
        .preview_apply_after_sale(&after_sale("88238", "MJT74CH/A", AfterSaleType::Exchange))
        .unwrap();
    assert_eq!(blocking_codes(&late), ["AFTER_SALE_WINDOW_CLOSED"]);
    let open = s
        .preview_apply_after_sale(&after_sale(
            "88232",
            "MFHP4CH/A",
            AfterSaleType::ReturnRefund,
        ))
        .unwrap();
    assert_eq!(
        blocking_codes(&open),
        ["AFTER_SALE_IN_PROGRESS", "AFTER_SALE_WINDOW_CLOSED"]
    );
    let in_transit = s
        .preview_apply_after_sale(&after_sale("88234", IPAD_AIR, AfterSaleType::Exchange))
        .unwrap();
    assert_eq!(blocking_codes(&in_transit), ["ORDER_STATUS"]);
}

// ---- a preview foretells its write ---------------------------------------------

mod foretells {
    use super::*;
    use bitselect::ShopError;
    use bitselect::params::{CreateOrderParams, OrderItemInput};
    use proptest::prelude::*;
    use proptest::sample::select;

    const SKUS: &[&str] = &[
        IPHONE_17,
        IPAD_AIR,
        VISION_PRO_3_LEFT,
        AIRPODS_NO_STOCK,
        IPHONE_16_DELISTED,
        "MK8T4FE/A",
        "NOPE-1",
    ];
    const ORDERS: &[&str] = &[
        "88231", "88232", "88234", "88235", "88236", "88238", "88239", "88240", "99999",
    ];
    const COUPONS: &[&str] = &[
        "SHOP-5000-300",
        "EDU-PAD-920",
        "PHONE-8000-500",
        "NEW-1000-100",
        "ACC-500-50",
        "NOPE",
    ];

    /// One write, with what its preview and the write itself answered.
    #[derive(Debug, Clone)]
    enum Op {
        Cart(UpdateCartItemParams),
        Order(CreateOrderParams),
        Pay(PayOrderParams),
        Cancel(CancelOrderParams),
        Address(ChangeAddressParams),
        AfterSale(ApplyAfterSaleParams),
        Wait(i64),
    }

    fn op() -> impl Strategy<Value = Op> {
        let sku = select(SKUS);
        let order_no = select(ORDERS).prop_map(str::to_owned);
        prop_oneof![
            3 => (sku.clone(), select(&[CartAction::Add, CartAction::Decrease, CartAction::Remove][..]), prop::option::of(0_u32..6))
                .prop_map(|(sku, action, quantity)| Op::Cart(UpdateCartItemParams { sku_code: sku.into(), action, quantity })),
            3 => (prop::collection::vec((sku, 1_u32..4), 1..3), prop::option::of(select(COUPONS)))
                .prop_map(|(items, coupon)| Op::Order(CreateOrderParams {
                    items: items.into_iter().map(|(sku, quantity)| OrderItemInput { sku_code: sku.into(), quantity }).collect(),
                    coupon_code: coupon.map(str::to_owned),
                    receiver_name: None,
                    receiver_phone: None,
                    receiver_address: None,
                })),
            2 => order_no.clone().prop_map(|order_no| Op::Pay(PayOrderParams { order_no })),
            2 => order_no.clone().prop_map(|order_no| Op::Cancel(CancelOrderParams { order_no, reason: None })),
            1 => order_no.clone().prop_map(|no| Op::Address(new_receiver(&no))),
            2 => (order_no, select(SKUS), select(&[AfterSaleType::ReturnRefund, AfterSaleType::Exchange][..]))
                .prop_map(|(no, sku, kind)| Op::AfterSale(after_sale(&no, sku, kind))),
            1 => (0_i64..20).prop_map(|days| Op::Wait(days * DAY)),
        ]
    }

    /// The preview's verdict must be the write's: the same error, the first
    /// blocker as the refusal, or success with the same amount.
    fn agree<T>(
        preview: Result<Preview, ShopError>,
        write: Result<T, ShopError>,
        amount: impl Fn(&Preview, &T) -> Option<(Option<i64>, Option<i64>)>,
    ) -> Result<(), TestCaseError> {
        match (preview, write) {
            (Err(p), Err(w)) => {
                prop_assert_eq!(p.code(), w.code());
                prop_assert_eq!(p.to_string(), w.to_string());
            }
            (Ok(p), Err(w)) => {
                let first = p.warnings.iter().find(|w| w.blocking);
                prop_assert!(
                    first.is_some(),
                    "the write refused {w} but the preview did not warn: {p:?}"
                );
                let first = first.unwrap();
                prop_assert_eq!(first.code.as_str(), w.code());
                // The shopper's sentence and the model's hint, both the write's.
                prop_assert_eq!(&first.message, &w.for_shopper());
                prop_assert_eq!(&first.hint, &w.hint());
            }
            (Ok(p), Ok(w)) => {
                prop_assert!(
                    !p.is_blocked(),
                    "the preview blocked a write that went through: {p:?}"
                );
                if let Some((shown, done)) = amount(&p, &w) {
                    prop_assert_eq!(shown, done);
                }
            }
            (Err(p), Ok(_)) => {
                prop_assert!(false, "the preview failed ({p}) but the write went through")
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(proptest_seed::replayable(ProptestConfig { cases: 48, ..ProptestConfig::default() }))]
        #[test]
        fn a_preview_foretells_what_its_write_does(ops in prop::collection::vec(op(), 1..12)) {
            let t = open_shop();
            let s = &t.shop;
            for op in ops {
                match op {
                    Op::Cart(p) => agree(s.preview_update_cart_item(&p), s.update_cart_item(&p, None).map(|w| w.value),
                        |pv, w| Some((total(pv, TotalKind::Cart), Some(w.cart.orderable_total_fen))))?,
                    Op::Order(p) => agree(s.preview_create_order(&p), s.create_order(&p, None).map(|w| w.value),
                        |pv, w| Some((total(pv, TotalKind::Pay), Some(w.pay_amount_fen))))?,
                    Op::Pay(p) => agree(s.preview_pay_order(&p), s.pay_order(&p, None).map(|w| w.value),
                        |pv, w| Some((total(pv, TotalKind::Pay), Some(w.paid_amount_fen))))?,
                    Op::Cancel(p) => agree(s.preview_cancel_order(&p), s.cancel_order(&p, None).map(|w| w.value),
                        |pv, w| Some((total(pv, TotalKind::Refund).or(Some(0)), Some(w.refund_amount_fen))))?,
                    Op::Address(p) => agree(s.preview_change_address(&p), s.change_address(&p, None).map(|w| w.value),
                        |pv, w| Some((pv.address.as_ref().map(|a| a.receiver_address.chars().count() as i64),
                                      Some(w.receiver.address.chars().count() as i64))))?,
                    Op::AfterSale(p) => agree(s.preview_apply_after_sale(&p), s.apply_after_sale(&p, None).map(|w| w.value),
                        |pv, w| Some((total(pv, TotalKind::Refund), w.refund_amount_fen)))?,
                    Op::Wait(by) => t.clock.advance(by),
                }
            }
        }
    }
}
