//! The shop asks the shopper in the middle of a call, end to end: after
//! the payment's own card is approved, `pay_order` asks to confirm the
//! amount and choose how to pay, in a form drawn in the window; filling it
//! pays the order. The form waits across closing and reopening the app,
//! and answering it then pays the order once.

mod support;

use std::error::Error;
use std::path::Path;

use serde_json::json;
use support::model::{ScriptedModel, Turn, text, tool_call};
use support::purchase::seed_purchase;
use support::{RunningApp, configure_model, shop_of};

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
    for _ in 0..3 {
        let call = app.asking_call()?;
        app.decide(&call, "approve")?;
    }
    app.wait_for_text("[data-testid=input-card]", "¥6499.00")?;
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
    app.wait_for_text("[data-testid=input-card]", "¥6499.00")?;
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
