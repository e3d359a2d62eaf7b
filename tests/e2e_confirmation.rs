//! The confirmation card end to end: the built app, the real shop server it
//! starts, a scripted model, and a person clicking through tauri-driver.

mod support;

use std::error::Error;

use bitselect::params::QueryOrderParams;
use serde_json::json;
use support::model::{ScriptedModel, Turn, text, tool_call};
use support::{RunningApp, cart_quantity, configure_model, shop_of};

type TestResult = Result<(), Box<dyn Error>>;

const IPHONE: &str = "MG6W4CH/A";

fn add_iphone_to_cart() -> Turn {
    tool_call(
        "call_cart",
        "bitselect__update_cart_item",
        json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
    )
}

fn order_iphone() -> Turn {
    tool_call(
        "call_order",
        "bitselect__create_order",
        json!({"items": [{"skuCode": IPHONE, "quantity": 1}]}),
    )
}

fn stock_of(data_dir: &std::path::Path, sku: &str) -> Result<i64, Box<dyn Error>> {
    let hit = shop_of(data_dir)?.sku(sku)?.ok_or("the SKU is gone")?;
    Ok(hit.stock)
}

#[test]
fn approving_both_cards_places_the_order_and_stock_and_cart_go_down() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![
        tool_call(
            "call_search",
            "bitselect__search_product",
            json!({"keyword": "iPhone 17"}),
        ),
        add_iphone_to_cart(),
        order_iphone(),
        text("已下单：iPhone 17 256GB 黑色，订单待支付。"),
    ])?;
    configure_model(data.path(), model.base_url())?;
    let stock_before = stock_of(data.path(), IPHONE)?;
    let app = RunningApp::launch(data.path())?;

    app.send_message("帮我买一台 iPhone 17 256GB 黑色")?;
    let cart_call = app.asking_call()?;
    let shown = app.session.text(&cart_call)?;
    assert!(shown.contains(IPHONE), "the card shows the SKU: {shown}");
    app.decide(&cart_call, "approve")?;

    let order_call = app.asking_call()?;
    let shown = app.session.text(&order_call)?;
    assert!(
        shown.contains(IPHONE),
        "the order card shows its lines: {shown}"
    );
    app.decide(&order_call, "approve")?;
    app.wait_for_text("[data-testid=message-assistant]", "订单待支付")?;

    let orders =
        serde_json::to_value(shop_of(data.path())?.query_order(&QueryOrderParams::default())?)?;
    let newest = &orders["orders"][0];
    assert_eq!(newest["status"], "待支付", "{newest}");
    assert!(newest.to_string().contains(IPHONE), "{newest}");
    let order_no = newest["orderNo"].as_str().ok_or("no order number")?;
    app.wait_for_text("main", order_no)?;
    assert_eq!(stock_of(data.path(), IPHONE)?, stock_before - 1);
    assert_eq!(cart_quantity(data.path(), IPHONE)?, 0);
    let requests = model.requests();
    assert_eq!(requests.len(), 4, "one model request per turn");
    let last = requests[3].to_string();
    assert!(
        last.contains("call_order"),
        "the order's result reached the model"
    );
    Ok(())
}

#[test]
fn denying_the_card_leaves_the_shop_untouched() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![add_iphone_to_cart(), text("好的，不加了。")])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;

    app.send_message("把 iPhone 17 加入购物车")?;
    let call = app.asking_call()?;
    let reason = app.session.find_in(&call, "[data-testid=deny-reason]")?;
    app.session.type_into(&reason, "先不买了")?;
    app.decide(&call, "deny")?;
    app.wait_for_text("[data-testid=message-assistant]", "不加了")?;

    app.session
        .find("[data-testid=card-call][data-status=denied]")?;
    assert_eq!(cart_quantity(data.path(), IPHONE)?, 0, "nothing was added");
    let requests = model.requests();
    let told = requests[1]["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "tool"))
        .and_then(|m| m["content"].as_str())
        .ok_or("the model got no tool result")?
        .to_owned();
    assert!(told.contains("拒绝") && told.contains("没有执行"), "{told}");
    assert!(
        told.contains("先不买了"),
        "the reason reached the model: {told}"
    );
    Ok(())
}

#[test]
fn a_card_left_pending_comes_back_after_a_restart_and_can_be_approved() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![add_iphone_to_cart(), text("已加入购物车。")])?;
    configure_model(data.path(), model.base_url())?;

    let app = RunningApp::launch(data.path())?;
    app.send_message("把 iPhone 17 加入购物车")?;
    app.asking_call()?;
    app.force_theme("light")?;
    app.save_screenshot("card-light")?;
    app.force_theme("dark")?;
    app.save_screenshot("card-dark")?;
    drop(app);

    let app = RunningApp::launch(data.path())?;
    let call = app.asking_call()?;
    app.decide(&call, "approve")?;
    app.wait_for_text("[data-testid=message-assistant]", "已加入购物车")?;
    assert_eq!(cart_quantity(data.path(), IPHONE)?, 1);
    Ok(())
}

#[test]
fn markup_from_the_model_and_from_product_data_shows_as_text() -> TestResult {
    let data = tempfile::tempdir()?;
    let payload =
        "<img src=x onerror=\"document.title='owned'\"><script>document.title='owned'</script>";
    // A product whose name carries markup, as a compromised catalogue might.
    let shop = shop_of(data.path())?;
    shop.connection()?.execute(
        "UPDATE sku SET name = ?1 WHERE sku_code = ?2",
        rusqlite::params![format!("iPhone 17 {payload}"), IPHONE],
    )?;
    let model = ScriptedModel::start(vec![
        tool_call(
            "call_search",
            "bitselect__search_product",
            json!({"skuCodes": [IPHONE]}),
        ),
        text(&format!("找到了 {payload} **粗体**")),
    ])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;

    app.send_message("搜一下")?;
    app.wait_for_text("[data-testid=message-assistant]", "找到了")?;
    let markup = app.session.execute(
        "return document.querySelectorAll('main img, main script').length;",
        json!([]),
    )?;
    assert_eq!(markup, json!(0), "no element came from the payloads");
    assert_eq!(app.session.title()?, "比特严选助手");
    let assistant = app.session.find("[data-testid=message-assistant]")?;
    assert!(app.session.text(&assistant)?.contains("<script>"));
    let product_text = model.requests()[1].to_string();
    assert!(
        product_text.contains("<img"),
        "the product name reached the model as text"
    );
    Ok(())
}

#[test]
fn the_page_cannot_approve_a_call_the_core_did_not_ask_for() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![add_iphone_to_cart()])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;
    app.send_message("把 iPhone 17 加入购物车")?;
    let call = app.asking_call()?;
    let call_id = app
        .session
        .attribute(&call, "data-call-id")?
        .ok_or("no call id")?;
    let card = app.session.find("[data-testid=confirmation-card]")?;
    let reply_id = app
        .session
        .attribute(&card, "data-reply-id")?
        .ok_or("no reply id")?;
    let session_id = app
        .session
        .attribute(
            &app.session.find("[data-testid=session-item]")?,
            "data-session-id",
        )?
        .ok_or("no session id")?;

    // Straight to the IPC, as a compromised page would.
    let forge = r#"
        const [sessionId, replyId, callId, done] = arguments;
        window.__TAURI_INTERNALS__.invoke("respond_confirmation", {
            sessionId, replyId, decisions: [{ call_id: callId, decision: { type: "approve" } }],
        }).then(() => done("accepted"), (error) => done(error.code || String(error)));
    "#;
    let made_up_reply = app
        .session
        .execute_async(forge, json!([session_id, "reply-made-up", call_id]))?;
    assert_eq!(made_up_reply, json!("stale_reply"));
    let made_up_call = app
        .session
        .execute_async(forge, json!([session_id, reply_id, "call-made-up"]))?;
    assert_eq!(made_up_call, json!("unknown_call"));

    assert_eq!(cart_quantity(data.path(), IPHONE)?, 0, "nothing ran");
    let still = app.asking_call()?;
    assert_eq!(
        app.session.attribute(&still, "data-call-id")?,
        Some(call_id)
    );
    Ok(())
}
