//! What the shopper agrees to, end to end: the order card shows the names,
//! prices, coupon and amount to pay the shop computed, and a price or stock
//! that changes between the card and the click refuses the click and shows
//! what the order would now be.

mod support;

use std::error::Error;
use std::path::Path;

use support::model::{ScriptedModel, Turn, text, tool_calls};
use support::purchase::{COUPON, IPHONE, seed_purchase};
use support::{
    Element, RunningApp, cart_quantity, configure, configure_model, newest_order, order_count,
    shop_of,
};

type TestResult = Result<(), Box<dyn Error>>;

/// The seed's purchase: the iPhone into the cart, then ordered with the
/// ¥300 coupon; then the model's closing words.
fn purchase(closing: &str) -> Vec<Turn> {
    let mut turns = seed_purchase();
    turns.push(text(closing));
    turns
}

/// The app with the iPhone in the cart (approved on its card) and the
/// order's card showing.
fn at_the_order_card(
    data: &Path,
    model: &ScriptedModel,
) -> Result<(RunningApp, Element), Box<dyn Error>> {
    configure_model(data, model.base_url())?;
    at_the_order_card_after(
        data,
        "帮我买一台 iPhone 17 256GB 黑色，用满 5000 减 300 的券",
    )
}

/// The app (configured already) asked to buy `message`, with the iPhone
/// in the cart (approved on its card) and the order's card showing.
fn at_the_order_card_after(
    data: &Path,
    message: &str,
) -> Result<(RunningApp, Element), Box<dyn Error>> {
    let app = RunningApp::launch(data)?;
    app.send_message(message)?;
    let cart_call = app.asking_call()?;
    app.decide(&cart_call, "approve")?;
    let order_call = app.asking_call()?;
    Ok((app, order_call))
}

fn set_sku(data: &Path, column: &str, value: i64) -> TestResult {
    let sql = format!("UPDATE sku SET {column} = ?1 WHERE sku_code = ?2");
    let changed = shop_of(data)?
        .connection()?
        .execute(&sql, rusqlite::params![value, IPHONE])?;
    assert_eq!(changed, 1);
    Ok(())
}

/// Clicks approve on a call whose approval the core is to refuse: the call
/// stays asking, so [`RunningApp::decide`] would wait forever.
fn click_approve(app: &RunningApp, call: &Element) -> TestResult {
    let button = app.session.find_in(call, "[data-testid=approve]")?;
    app.session.click(&button)?;
    Ok(())
}

#[test]
fn the_order_card_shows_the_product_price_coupon_and_amount_to_pay() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(purchase("已下单，应付 ¥6,499.00。"))?;
    let (app, order_call) = at_the_order_card(data.path(), &model)?;

    let shown = app.session.text(&order_call)?;
    for expected in ["iPhone 17", "256GB 黑色", "¥6,799.00", COUPON, "¥6,499.00"] {
        assert!(
            shown.contains(expected),
            "the card shows {expected}: {shown}"
        );
    }
    app.screenshots_for_docs("confirmation-card")?;

    let before = order_count(data.path())?;
    app.decide(&order_call, "approve")?;
    app.wait_for_text("[data-testid=message-assistant]", "已下单")?;
    assert_eq!(order_count(data.path())?, before + 1);
    let newest = newest_order(data.path())?;
    assert_eq!(newest["payAmountFen"], 649_900, "{newest}");
    Ok(())
}

#[test]
fn in_an_english_window_the_order_card_shows_the_same_order_in_english() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(purchase("Ordered: ¥6,499.00 to pay."))?;
    configure(
        data.path(),
        model.base_url(),
        Some(ragent::settings::Language::En),
    )?;
    let (app, order_call) = at_the_order_card_after(
        data.path(),
        "Buy me an iPhone 17 256GB in black, with the ¥300 off ¥5,000 coupon",
    )?;

    let shown = app.session.text(&order_call)?;
    for expected in ["iPhone 17", "¥6,799.00", COUPON, "¥6,499.00", "Approve"] {
        assert!(
            shown.contains(expected),
            "the card shows {expected}: {shown}"
        );
    }
    assert!(!shown.contains("批准"), "no Chinese button: {shown}");
    app.screenshots_for_docs("confirmation-card-en")?;
    app.decide(&order_call, "approve")?;
    app.wait_for_text("[data-testid=message-assistant]", "Ordered")?;
    assert_eq!(newest_order(data.path())?["payAmountFen"], 649_900);
    Ok(())
}

#[test]
fn a_price_changed_before_the_click_is_refused_and_a_second_approval_pays_the_new_price()
-> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(purchase("已按新价格下单。"))?;
    let (app, order_call) = at_the_order_card(data.path(), &model)?;
    let before = order_count(data.path())?;

    set_sku(data.path(), "price_fen", 699_900)?;
    click_approve(&app, &order_call)?;
    // The card now shows the new price and what to pay, and still asks.
    app.wait_for_text("[data-testid=card-call][data-status=asking]", "¥6,999.00")?;
    let asking = app.asking_call()?;
    let shown = app.session.text(&asking)?;
    assert!(
        shown.contains("¥6,699.00"),
        "the new amount to pay: {shown}"
    );
    assert_eq!(order_count(data.path())?, before, "nothing ordered");

    app.decide(&asking, "approve")?;
    app.wait_for_text("[data-testid=message-assistant]", "已按新价格下单")?;
    assert_eq!(order_count(data.path())?, before + 1);
    let newest = newest_order(data.path())?;
    assert_eq!(newest["payAmountFen"], 669_900, "{newest}");
    Ok(())
}

#[test]
fn stock_taken_before_the_click_is_refused_with_the_shops_message() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(purchase("库存不足，没有下单。"))?;
    let (app, order_call) = at_the_order_card(data.path(), &model)?;
    let before = order_count(data.path())?;

    set_sku(data.path(), "stock", 0)?;
    click_approve(&app, &order_call)?;
    // What proves the refusal: the card asks again with the shop's blocking
    // warning in its new preview (the preview's stock column is there all along).
    let blocking = "[data-testid=card-call][data-status=asking] [data-testid=preview-warning][data-blocking=true]";
    app.wait_for_text(blocking, "暂时无货")?;
    let warning = app.session.find(blocking)?;
    let shown = app.session.text(&warning)?;
    assert!(
        shown.contains("iPhone 17 256GB 黑色 暂时无货"),
        "the shop's own message, for the shopper: {shown}"
    );
    let error = app.session.find("[data-testid=card-error]")?;
    assert_eq!(
        app.session.text(&error)?,
        "价格、库存或金额已变化，请查看新的预览后重新决定。",
        "the card says why the click was refused"
    );
    assert_eq!(order_count(data.path())?, before, "nothing ordered");
    let asking = app.asking_call()?;
    assert_eq!(
        app.session.attribute(&asking, "data-call-id")?,
        app.session.attribute(&order_call, "data-call-id")?,
        "the same call asks again"
    );
    Ok(())
}

/// The text of the risk badge of `call`, and whether the call is drawn as
/// a red card.
fn badge_of(app: &RunningApp, call: &Element) -> Result<(String, bool), Box<dyn Error>> {
    let badge = app.session.find_in(call, "[data-testid=risk]")?;
    let class = app.session.attribute(call, "class")?.unwrap_or_default();
    Ok((
        app.session.text(&badge)?,
        class
            .split_whitespace()
            .any(|c| c == "card-call-destructive"),
    ))
}

#[test]
fn the_cart_card_says_it_can_be_undone_and_the_order_card_names_what_it_pays() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(purchase("已下单。"))?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;
    app.send_message("帮我买一台 iPhone 17 256GB 黑色，用满 5000 减 300 的券")?;

    let cart_call = app.asking_call()?;
    assert_eq!(
        badge_of(&app, &cart_call)?,
        ("可撤回".to_owned(), false),
        "adding to the cart is no red card that cannot be undone"
    );
    app.decide(&cart_call, "approve")?;

    let order_call = app.asking_call()?;
    assert_eq!(
        badge_of(&app, &order_call)?,
        ("将付款 ¥6,499.00".to_owned(), true),
        "the order says it moves money, and how much"
    );
    Ok(())
}

#[test]
fn an_order_the_shop_says_cannot_run_leads_with_why_and_approves_only_on_a_second_click()
-> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(purchase("库存不足，没有下单。"))?;
    let (app, order_call) = at_the_order_card(data.path(), &model)?;
    let before = order_count(data.path())?;

    // Stock gone before the click: the approval is refused and the card
    // comes back with the shop's blocker leading it.
    set_sku(data.path(), "stock", 0)?;
    click_approve(&app, &order_call)?;
    app.wait_for_text(
        "[data-testid=card-call][data-status=asking] [data-testid=blocker]",
        "暂时无货",
    )?;
    let asking = app.asking_call()?;
    // In the shopper's words: the product's name, no SKU code, no tool.
    let blocker = app.session.find_in(&asking, "[data-testid=blocker]")?;
    let said = app.session.text(&blocker)?;
    assert!(said.contains("iPhone 17 256GB 黑色 暂时无货"), "{said}");
    for model_word in [IPHONE, "search_product", "update_cart_item", "skuCode"] {
        assert!(
            !said.contains(model_word),
            "the card says {model_word}: {said}"
        );
    }
    let approve = app.session.find_in(&asking, "[data-testid=approve]")?;
    assert_eq!(app.session.text(&approve)?, "仍要批准…");
    assert_eq!(
        badge_of(&app, &asking)?.0,
        "涉及付款或退款",
        "no amount is promised for an order that cannot be placed"
    );

    // The first click only arms approving; nothing is sent.
    app.arm_approve(&asking)?;
    assert_eq!(app.session.text(&approve)?, "确认批准（很可能失败）");
    assert_eq!(
        app.session.attribute(&app.asking_call()?, "data-call-id")?,
        app.session.attribute(&asking, "data-call-id")?,
        "the same call still asks"
    );
    assert_eq!(order_count(data.path())?, before, "nothing ordered");

    // The second click approves: the shop refuses, and no order exists.
    app.session.click(&approve)?;
    app.wait_for_text("[data-testid=message-assistant]", "库存不足")?;
    assert_eq!(order_count(data.path())?, before, "nothing ordered");
    // The failed card gives the shopper's sentence; the model got its hint.
    let reason = app
        .session
        .find("[data-testid=card-call][data-status=failed] [data-testid=call-reason]")?;
    let said = app.session.text(&reason)?;
    assert!(
        said.contains("暂时无货") && !said.contains("search_product"),
        "{said}"
    );
    let told = serde_json::to_string(&model.requests())?;
    assert!(
        told.contains("search_product 查找有货的其他配置"),
        "the model is told what to do next"
    );
    Ok(())
}

#[test]
fn an_order_on_the_card_of_its_add_says_it_will_ask_again_and_asks_with_the_total_after_the_add()
-> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![
        tool_calls(&[
            (
                "call_cart",
                "bitselect__update_cart_item",
                serde_json::json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
            ),
            (
                "call_order",
                "bitselect__create_order",
                serde_json::json!({"items": [{"skuCode": IPHONE, "quantity": 1}], "couponCode": COUPON}),
            ),
        ]),
        text("已下单，应付 ¥6,499.00。"),
    ])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;
    app.send_message("加一台 iPhone 17 到购物车并下单")?;

    // One card, two calls: the order's preview says it does not count the add yet.
    let cart_call = app.asking_call()?;
    let order_note = "[data-call-id] [data-testid=preview-sequence]";
    app.wait_for_text(order_note, "还没算上本卡片上面的操作")?;
    let notes = app.session.find_all(order_note)?;
    assert_eq!(notes.len(), 1, "only the order carries the note");
    let before = order_count(data.path())?;

    app.decide(&cart_call, "approve")?;
    let order_call = app.asking_call()?;
    // The shop says the order cannot run now (nothing in the cart): the
    // first click arms approving, the second approves; the batch then runs.
    app.arm_approve(&order_call)?;
    let approve = app.session.find_in(&order_call, "[data-testid=approve]")?;
    app.session.click(&approve)?;

    // The add ran; the order did not: it asks again, worked out after the add.
    let again = "[data-testid=card-call][data-status=asking] [data-testid=preview-sequence]";
    app.wait_for_text(again, "上面的操作已执行")?;
    assert_eq!(cart_quantity(data.path(), IPHONE)?, 1, "the add ran");
    assert_eq!(order_count(data.path())?, before, "nothing ordered yet");
    let asking = app.asking_call()?;
    let shown = app.session.text(&asking)?;
    assert!(
        shown.contains("¥6,499.00"),
        "the order's amount to pay after the add: {shown}"
    );

    app.decide(&asking, "approve")?;
    app.wait_for_text("[data-testid=message-assistant]", "已下单")?;
    assert_eq!(order_count(data.path())?, before + 1);
    let newest = newest_order(data.path())?;
    assert_eq!(newest["payAmountFen"], 649_900, "{newest}");
    Ok(())
}
