//! The shop asks the shopper in the middle of a call, end to end: after
//! the payment's own card is approved, `pay_order` asks to confirm the
//! amount and choose how to pay, in a form drawn in the window; filling it
//! pays the order. The form waits across closing and reopening the app,
//! and answering it then pays the order once. An order to a shopper with
//! two saved addresses says on its card that the shop will ask, and its
//! finished card shows the address chosen.

mod support;

use std::error::Error;
use std::path::Path;

use serde_json::json;
use support::model::{ScriptedModel, Turn, text, tool_call};
use support::purchase::{IPHONE, seed_purchase};
use support::{RunningApp, configure_model, newest_order, order_count, shop_of};

type TestResult = Result<(), Box<dyn Error>>;

/// The order the purchase places: the seed's orders end at 88238.
const NEW_ORDER: &str = "88239";

/// The seed's purchase (the iPhone into the cart, ordered with the ¥300
/// coupon), then its payment; then the model's closing words.
fn purchase_and_pay(closing: &str) -> Vec<Turn> {
    let mut turns = seed_purchase();
    turns.push(tool_call(
        "call_pay",
        "bitselect__pay_order",
        json!({"orderNo": NEW_ORDER}),
    ));
    turns.push(text(closing));
    turns
}

/// Approves the three cards and waits for the shop's payment form.
fn at_the_payment_form(data: &Path, model: &ScriptedModel) -> Result<RunningApp, Box<dyn Error>> {
    configure_model(data, model.base_url())?;
    let app = RunningApp::launch(data)?;
    app.send_message("帮我买一台 iPhone 17 256GB 黑色，用满 5000 减 300 的券，然后付款")?;
    for card in ["cart", "order", "payment"] {
        let call = app.asking_call()?;
        if card == "payment" {
            // Each amount named once: no "应付 支付金额".
            let names = app.session.execute(
                "return [...document.querySelectorAll('[data-testid=card-call][data-status=asking] [data-testid=preview-totals] dt')].map((dt) => dt.textContent);",
                json!([]),
            )?;
            assert_eq!(
                names,
                json!(["商品金额", "优惠店铺满减券（SHOP-5000-300）", "应付"]),
                "the payment card's amounts"
            );
        }
        app.decide(&call, "approve")?;
    }
    app.wait_for_text("[data-testid=input-card]", "¥6,499.00")?;
    Ok(app)
}

fn order_status(data: &Path) -> Result<(String, Option<i64>), Box<dyn Error>> {
    let row = shop_of(data)?.connection()?.query_row(
        "SELECT status, paid_at FROM orders WHERE order_no = ?1",
        [NEW_ORDER],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    Ok(row)
}

/// Chooses the payment method in the form and submits it.
fn pay_with(app: &RunningApp, method: &str) -> TestResult {
    let card = app.session.find("[data-testid=input-card]")?;
    let option = app.session.find_in(
        &card,
        &format!("[data-testid=field-method] option[value={method}]"),
    )?;
    app.session.click(&option)?;
    let chosen = app.session.execute(
        "return document.querySelector('[data-testid=input-card] [data-testid=field-method]').value;",
        json!([]),
    )?;
    assert_eq!(chosen, json!(method), "the form holds the chosen method");
    let submit = app.session.find_in(&card, "[data-testid=input-submit]")?;
    app.session.click(&submit)?;
    Ok(())
}

#[test]
fn the_seed_purchase_is_paid_once_the_payment_form_is_filled_in_the_window() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(purchase_and_pay("已用微信支付付款，等待发货。"))?;
    let app = at_the_payment_form(data.path(), &model)?;
    assert_eq!(
        order_status(data.path())?.0,
        "待支付",
        "nothing paid before the form"
    );
    let card = app.session.find("[data-testid=input-card]")?;
    let shown = app.session.text(&card)?;
    assert!(shown.contains(NEW_ORDER), "{shown}");
    app.screenshots_for_docs("input-card")?;

    pay_with(&app, "wechat")?;
    app.wait_for_text("[data-testid=message-assistant]", "已用微信支付付款")?;
    app.wait_for_text("[data-testid=input-outcome]", "已提交")?;
    let (status, paid_at) = order_status(data.path())?;
    assert_eq!(status, "已支付待发货");
    assert!(paid_at.is_some());
    drop(app);

    // Reopened, the history still shows the answered form with its choice.
    let app = RunningApp::launch(data.path())?;
    app.wait_for_text("[data-testid=input-card][data-outcome=accepted]", NEW_ORDER)?;
    let chosen = app.session.execute(
        "return document.querySelector('[data-testid=input-card] [data-testid=field-method]').value;",
        json!([]),
    )?;
    assert_eq!(chosen, json!("wechat"), "the method the shopper chose");
    let outcome = app.session.find("[data-testid=input-outcome]")?;
    assert_eq!(app.session.text(&outcome)?, "已提交");
    Ok(())
}

#[test]
fn the_payment_form_waits_across_closing_the_app_and_answering_it_then_pays_once() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(purchase_and_pay("已用支付宝付款。"))?;
    let app = at_the_payment_form(data.path(), &model)?;
    drop(app);
    assert_eq!(order_status(data.path())?.0, "待支付");

    let app = RunningApp::launch(data.path())?;
    app.wait_for_text("[data-testid=input-card]", "¥6,499.00")?;
    pay_with(&app, "alipay")?;
    app.wait_for_text("[data-testid=message-assistant]", "已用支付宝付款")?;
    let (status, paid_at) = order_status(data.path())?;
    assert_eq!(status, "已支付待发货");
    let payments: i64 = shop_of(data.path())?.connection()?.query_row(
        "SELECT count(*) FROM idempotency WHERE tool = 'pay_order'",
        [],
        |row| row.get(0),
    )?;
    assert_eq!(payments, 1, "one payment, under the call's key");
    assert!(paid_at.is_some());
    Ok(())
}

/// A second saved address: an earlier order of one iPhone sent to 李雷 in
/// Beijing, now the latest receiver. The seed's own is in Shanghai.
fn with_an_order_sent_to_beijing(data: &Path) -> TestResult {
    let shop = shop_of(data)?;
    shop.update_cart_item(
        &serde_json::from_value(json!({"skuCode": IPHONE, "action": "add", "quantity": 1}))?,
        None,
    )?;
    shop.create_order(
        &serde_json::from_value(json!({
            "items": [{"skuCode": IPHONE, "quantity": 1}],
            "receiverName": "李雷", "receiverPhone": "13700137000",
            "receiverAddress": "北京市海淀区中关村大街 1 号"
        }))?,
        None,
    )?;
    Ok(())
}

/// The text of `selector` inside the card call `call_id`, read from the
/// page even where a closed disclosure hides it.
fn text_in_call(app: &RunningApp, call_id: &str, selector: &str) -> Result<String, Box<dyn Error>> {
    let found = app.session.execute(
        "const el = document.querySelector(`[data-testid=card-call][data-call-id=\"${arguments[0]}\"] ${arguments[1]}`);
         return el === null ? null : el.textContent;",
        json!([call_id, selector]),
    )?;
    Ok(found
        .as_str()
        .ok_or(format!("{selector} in call {call_id}"))?
        .to_owned())
}

#[test]
fn an_order_to_one_of_two_saved_addresses_says_the_shopper_will_choose_and_ends_showing_the_one_chosen()
-> TestResult {
    let data = tempfile::tempdir()?;
    with_an_order_sent_to_beijing(data.path())?;
    let shanghai = shop_of(data.path())?
        .saved_addresses()?
        .into_iter()
        .find(|saved| saved.receiver.address.starts_with("上海"))
        .ok_or("the seed's Shanghai address")?;
    let mut turns = seed_purchase();
    turns.push(text("已下单，寄往上海。"));
    let model = ScriptedModel::start(turns)?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;
    app.send_message("帮我买一台 iPhone 17 256GB 黑色，用满 5000 减 300 的券")?;
    let cart = app.asking_call()?;
    app.decide(&cart, "approve")?;

    // The order's card names no address as chosen: it says the shop will ask.
    let order = app.asking_call()?;
    let order_id = app
        .session
        .attribute(&order, "data-call-id")?
        .ok_or("the order call's id")?;
    let address = app
        .session
        .find_in(&order, "[data-testid=preview-address]")?;
    let shown = app.session.text(&address)?;
    assert!(
        shown.contains("尚未选定：下单时商城会请您从 2 个已保存地址中选择"),
        "{shown}"
    );
    assert!(
        shown.contains("北京市海淀区") && shown.contains("上海市浦东新区"),
        "{shown}"
    );
    let before = order_count(data.path())?;
    app.decide(&order, "approve")?;

    // The shop asks; the shopper picks Shanghai, not the latest receiver.
    app.wait_for_text("[data-testid=input-card]", "寄到哪里")?;
    let card = app.session.find("[data-testid=input-card]")?;
    let option = app.session.find_in(
        &card,
        &format!(
            "[data-testid=field-address] option[value=\"{}\"]",
            shanghai.id
        ),
    )?;
    app.session.click(&option)?;
    let submit = app.session.find_in(&card, "[data-testid=input-submit]")?;
    app.session.click(&submit)?;
    app.wait_for_text("[data-testid=message-assistant]", "已下单")?;

    assert_eq!(order_count(data.path())?, before + 1);
    assert_eq!(newest_order(data.path())?["receiver"]["name"], "张明");
    // The finished card shows the address the order used, from its result.
    let used = text_in_call(&app, &order_id, "[data-testid=address-used]")?;
    assert!(used.contains("上海市浦东新区"), "{used}");
    let block = text_in_call(&app, &order_id, "[data-testid=preview-address]")?;
    assert!(
        !block.contains("北京"),
        "the finished card names no other address: {block}"
    );
    Ok(())
}
