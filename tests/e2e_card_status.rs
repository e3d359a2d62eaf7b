//! What became of a call, end to end: a card says it the way the call's
//! stored state does (a failed order red with the shop's reason, a denial
//! with the user's reason, a call refused for bad arguments), each call
//! appears once, and a reopened app draws the decided card as the live
//! chat did.

mod support;

use std::error::Error;

use serde_json::json;
use support::model::{ScriptedModel, text, tool_call, tool_calls};
use support::{RunningApp, configure_model};

type TestResult = Result<(), Box<dyn Error>>;

/// In the shop's catalogue, not in the seed cart.
const IPHONE: &str = "MG6W4CH/A";

/// The one-line summaries of the decided cards' calls, as the page reads them.
const CARD_LINES: &str = r#"
return Array.from(document.querySelectorAll("[data-testid=confirmation-card] [data-testid=card-call] summary"))
  .map((summary) => summary.textContent);
"#;

fn card_lines(app: &RunningApp) -> Result<Vec<String>, Box<dyn Error>> {
    let value = app.session.execute(CARD_LINES, json!([]))?;
    Ok(serde_json::from_value(value)?)
}

fn chip_count(app: &RunningApp) -> Result<usize, Box<dyn Error>> {
    let value = app.session.execute(
        "return document.querySelectorAll('[data-testid=tool-chip]').length;",
        json!([]),
    )?;
    Ok(value.as_u64().unwrap_or(u64::MAX) as usize)
}

#[test]
fn an_approved_order_that_fails_turns_its_card_red_with_the_shops_reason_also_after_a_restart()
-> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![
        tool_call(
            "call_order",
            "bitselect__create_order",
            json!({"items": [{"skuCode": IPHONE, "quantity": 1}]}),
        ),
        text("下单没有成功。"),
    ])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;

    app.send_message("直接帮我下单一台 iPhone 17")?;
    let order = app.asking_call()?;
    // The shop already says the iPhone is not in the cart: approving takes
    // a second, explicit click.
    app.arm_approve(&order)?;
    app.decide(&order, "approve")?;
    app.wait_for_text("[data-testid=message-assistant]", "没有成功")?;

    let failed = app
        .session
        .find("[data-testid=card-call][data-status=failed]")?;
    assert_eq!(
        app.session.attribute(&failed, "data-tone")?.as_deref(),
        Some("bad")
    );
    // Visible without a click: the summary line, not the closed body.
    let line = app.session.find_in(&failed, "summary")?;
    let shown = app.session.text(&line)?;
    assert!(shown.contains("✗ 失败"), "{shown}");
    assert!(
        shown.contains("购物车里没有 iPhone 17 256GB 黑色"),
        "the shop's reason, for the shopper: {shown}"
    );
    assert!(
        !shown.contains("update_cart_item"),
        "no tool on the card: {shown}"
    );
    assert_eq!(chip_count(&app)?, 0, "the call shows once, on its card");
    app.screenshots_for_docs("failed-card")?;
    let before = card_lines(&app)?;
    drop(app);

    let app = RunningApp::launch(data.path())?;
    app.wait_for_text(
        "[data-testid=card-call][data-status=failed]",
        "购物车里没有",
    )?;
    assert_eq!(
        card_lines(&app)?,
        before,
        "the reopened chat draws the same card"
    );
    assert_eq!(
        chip_count(&app)?,
        0,
        "no chip beside the card after a restart"
    );
    Ok(())
}

#[test]
fn a_denied_call_shows_its_reason_and_one_with_bad_arguments_says_so_also_after_a_restart()
-> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![
        tool_calls(&[
            (
                "call_cart",
                "bitselect__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
            ),
            (
                "call_bad",
                "bitselect__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": "two"}),
            ),
        ]),
        text("好的，不加了。"),
    ])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;

    app.send_message("把 iPhone 17 加入购物车")?;
    let call = app.asking_call()?;
    let bad = app
        .session
        .find("[data-testid=card-call][data-status=rejected]")?;
    let said = app.session.text(&bad)?;
    assert!(said.contains("参数有误，未执行"), "{said}");
    let reason = app.session.find_in(&call, "[data-testid=deny-reason]")?;
    app.session.type_into(&reason, "先不买了")?;
    app.decide(&call, "deny")?;
    app.wait_for_text("[data-testid=message-assistant]", "不加了")?;

    let lines = card_lines(&app)?;
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("✗ 已拒绝") && l.contains("理由：先不买了")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("参数有误，未执行")),
        "{lines:?}"
    );
    assert_eq!(chip_count(&app)?, 0, "each call shows once, on its card");
    app.screenshots_for_docs("decided-card")?;
    drop(app);

    let app = RunningApp::launch(data.path())?;
    app.wait_for_text("[data-testid=confirmation-card]", "理由：先不买了")?;
    assert_eq!(
        card_lines(&app)?,
        lines,
        "the reopened chat draws the same card"
    );
    assert_eq!(
        chip_count(&app)?,
        0,
        "no chip beside the card after a restart"
    );
    Ok(())
}
