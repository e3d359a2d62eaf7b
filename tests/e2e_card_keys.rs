//! Deciding a card from the keyboard and editing a call's arguments in its
//! form, end to end: the built app, the real shop it starts, a scripted
//! model, and keys pressed through tauri-driver.

mod support;

use std::error::Error;

use serde_json::json;
use support::model::{ScriptedModel, text, tool_call, tool_calls};
use support::{RunningApp, cart_quantity, configure_model};

type TestResult = Result<(), Box<dyn Error>>;

const IPHONE: &str = "MG6W4CH/A";
const AIRPODS: &str = "MYEW3CH/A";
/// The W3C WebDriver code of the Enter key.
const ENTER: &str = "\u{E007}";

#[test]
fn pressing_enter_twice_approves_both_calls_of_a_card_and_both_run() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![
        tool_calls(&[
            (
                "call_phone",
                "bitselect__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
            ),
            (
                "call_pods",
                "bitselect__update_cart_item",
                json!({"skuCode": AIRPODS, "action": "add", "quantity": 1}),
            ),
        ]),
        text("两件都已加入购物车。"),
    ])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;
    app.send_message("把 iPhone 17 和 AirPods 都加入购物车")?;
    app.asking_call()?;
    // The core gives each call an id of its own: read them from the card.
    let mut ids = Vec::new();
    for call in app
        .session
        .find_all("[data-testid=card-call][data-status=asking]")?
    {
        ids.push(
            app.session
                .attribute(&call, "data-call-id")?
                .ok_or("a call without its id")?,
        );
    }
    let [phone, pods] = ids.as_slice() else {
        return Err(format!("two calls ask: {ids:?}").into());
    };
    let before = (
        cart_quantity(data.path(), IPHONE)?,
        cart_quantity(data.path(), AIRPODS)?,
    );

    // The card takes focus on its first call's approve button and says so.
    app.wait_for_focus(phone, "approve")?;
    app.wait_for_text("[data-testid=card-announce]", "2 个操作待确认")?;
    app.session.press_keys(ENTER)?;
    app.wait_until_decided(phone)?;
    // Focus moved on to the next call's approve button, not a reason field.
    app.wait_for_focus(pods, "approve")?;
    app.session.press_keys(ENTER)?;
    app.wait_until_decided(pods)?;
    // Every call decided: focus is back in the composer for the next message.
    app.session.execute_async(
        "const [done] = arguments;
         const look = () => document.activeElement?.dataset.testid === 'composer-input' ? done(true) : setTimeout(look, 50);
         look();",
        json!([]),
    )?;

    app.wait_for_text("[data-testid=message-assistant]", "两件都已加入购物车")?;
    assert_eq!(
        (
            cart_quantity(data.path(), IPHONE)?,
            cart_quantity(data.path(), AIRPODS)?,
        ),
        (before.0 + 1, before.1 + 1),
        "both calls ran"
    );
    Ok(())
}

#[test]
fn a_quantity_changed_in_the_form_runs_after_its_new_preview_is_approved() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![
        tool_call(
            "call_cart",
            "bitselect__update_cart_item",
            json!({"skuCode": IPHONE, "action": "add", "quantity": 2}),
        ),
        text("已加入 1 台。"),
    ])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;
    app.send_message("加两台 iPhone 17 到购物车")?;
    let call = app.asking_call()?;
    let call_id = app
        .session
        .attribute(&call, "data-call-id")?
        .ok_or("a call without its id")?;
    let before = cart_quantity(data.path(), IPHONE)?;
    let summary = "[data-testid=card-call][data-status=asking] [data-testid=preview-summary]";
    app.wait_for_text(summary, "×2，")?;

    let edit = app.session.find_in(&call, "[data-testid=edit-arguments]")?;
    app.session.click(&edit)?;
    let quantity = app.session.find_in(&call, "[data-testid=field-quantity]")?;
    app.session.clear(&quantity)?;
    app.session.type_into(&quantity, "1")?;
    let approve_edited = app.session.find_in(&call, "[data-testid=approve-edited]")?;
    app.session.click(&approve_edited)?;

    // An edit of a call with a preview is not approved in the same step:
    // the card comes back proposing it, with its own preview.
    app.wait_for_text(summary, "×1，")?;
    // The shopper's own edit, not a change of price or stock.
    app.wait_for_text("[data-testid=card-error]", "已按你的修改重新计算")?;
    let said = app
        .session
        .text(&app.session.find("[data-testid=card-error]")?)?;
    assert!(!said.contains("价格、库存或金额已变化"), "{said}");
    assert_eq!(
        cart_quantity(data.path(), IPHONE)?,
        before,
        "nothing ran yet"
    );

    app.wait_for_focus(&call_id, "approve")?;
    app.session.press_keys(ENTER)?;
    app.wait_until_decided(&call_id)?;
    app.wait_for_text("[data-testid=message-assistant]", "已加入 1 台")?;
    assert_eq!(
        cart_quantity(data.path(), IPHONE)?,
        before + 1,
        "the edited quantity ran"
    );
    // The model's call still says 2: its result tells it the user chose 1.
    let told = serde_json::to_string(&model.requests())?;
    assert!(
        told.contains("修改了参数（quantity：2 → 1）"),
        "the model is told the edit"
    );
    Ok(())
}
