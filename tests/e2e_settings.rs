//! The settings screen end to end: the built app on its own data
//! directory, its sections, the tools of the real shop grouped by what they
//! can do, the save bar that stays in view while something is unsaved, and
//! the language and theme kept in the data directory across a restart, and
//! the audit log's dates read in the chosen language's order.

mod support;

use std::error::Error;
use std::path::Path;

use serde_json::json;
use support::model::{ScriptedModel, text, tool_call};
use support::{RunningApp, configure};

type TestResult = Result<(), Box<dyn Error>>;

/// Sets a select's value as a person choosing an option does.
const CHOOSE: &str = r#"
const [selector, value] = arguments;
const select = document.querySelector(selector);
select.value = value;
select.dispatchEvent(new Event("change", { bubbles: true }));
"#;

fn choose(app: &RunningApp, selector: &str, value: &str) -> TestResult {
    app.session.execute(CHOOSE, json!([selector, value]))?;
    Ok(())
}

/// The app on a fresh data directory (the page in the system's language),
/// its settings open at the tools section; the model lives as long as the
/// caller keeps it.
fn at_the_tools_section(data: &Path) -> Result<(ScriptedModel, RunningApp), Box<dyn Error>> {
    let model = ScriptedModel::start(vec![])?;
    configure(data, model.base_url(), None)?;
    let app = RunningApp::launch(data)?;
    click(&app, "[data-testid=settings]")?;
    click(&app, "[data-testid=section-tools]")?;
    app.wait_for_text("[data-testid=tool-group][data-group=money]", "支付订单")?;
    Ok((model, app))
}

fn click(app: &RunningApp, selector: &str) -> TestResult {
    let element = app.session.find(selector)?;
    app.session.click(&element)?;
    Ok(())
}

fn page_attribute(app: &RunningApp, name: &str) -> Result<String, Box<dyn Error>> {
    let value = app.session.execute(
        "return document.documentElement.getAttribute(arguments[0]) || '';",
        json!([name]),
    )?;
    Ok(value.as_str().unwrap_or_default().to_owned())
}

#[test]
fn the_settings_group_the_shops_tools_and_keep_language_and_theme_in_the_data_directory()
-> TestResult {
    let data = tempfile::tempdir()?;
    let (_model, app) = at_the_tools_section(data.path())?;
    app.wait_for_text(
        "[data-testid=tool-group][data-group=cart]",
        "加入/修改购物车",
    )?;
    app.wait_for_text("[data-testid=tool-group][data-group=read]", "搜索商品")?;
    app.screenshots_for_docs("settings")?;

    // A fresh data directory follows the system's language; the other one,
    // once chosen, is saved with the rest and outlives a restart.
    let system = app
        .session
        .execute("return navigator.language;", json!([]))?
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (fresh, chosen, nav_label) = if system.starts_with("zh") {
        ("zh-CN", "en", "Settings")
    } else {
        ("en", "zh-CN", "设置")
    };
    assert_eq!(page_attribute(&app, "lang")?, fresh);
    click(&app, "[data-testid=section-appearance]")?;
    choose(&app, "[data-testid=language]", chosen)?;
    choose(&app, "[data-testid=theme]", "dark")?;
    click(&app, "[data-testid=save-settings]")?;
    app.wait_for_text("[data-testid=settings]", nav_label)?;
    drop(app);

    let app = RunningApp::launch(data.path())?;
    app.wait_for_text("[data-testid=settings]", nav_label)?;
    assert_eq!(page_attribute(&app, "lang")?, chosen);
    assert_eq!(page_attribute(&app, "data-theme")?, "dark");
    Ok(())
}

#[test]
fn a_changed_tool_policy_marks_the_settings_unsaved() -> TestResult {
    let data = tempfile::tempdir()?;
    let (_model, app) = at_the_tools_section(data.path())?;
    // Something unsaved: the bar stays in view at the bottom.
    choose(&app, "[data-tool=bitselect__change_address] select", "deny")?;
    app.wait_for_text("[data-testid=save-bar][data-dirty=true]", "")?;
    Ok(())
}

#[test]
fn the_language_chosen_on_the_first_run_page_redraws_it_and_is_kept_for_the_next_start()
-> TestResult {
    let data = tempfile::tempdir()?;
    {
        let app = RunningApp::launch(data.path())?;
        app.wait_for_element("[data-testid=first-run-language]")?;
        // The window was made with the model check's answer (no model set
        // up), so its first screen is this page, not the chat before it.
        let handed = app
            .session
            .execute("return window.__BITSELECT_START__.model.state;", json!([]))?;
        assert_eq!(handed, "not_configured");
        choose(&app, "[data-testid=first-run-language]", "en")?;
        app.wait_for_text("[data-testid=first-run-about]", "always shows you exactly")?;
        assert_eq!(page_attribute(&app, "lang")?, "en");
        choose(&app, "[data-testid=first-run-language]", "zh-CN")?;
        app.wait_for_text("[data-testid=first-run-about]", "总是先把要做的事给你看")?;
        assert_eq!(page_attribute(&app, "lang")?, "zh-CN");
    }
    // The choice was saved with the settings: the next start speaks it.
    let app = RunningApp::launch(data.path())?;
    app.wait_for_text("[data-testid=first-run-about]", "总是先把要做的事给你看")?;
    assert_eq!(page_attribute(&app, "lang")?, "zh-CN");
    Ok(())
}

/// A day relative to today on the page's clock, written month first as
/// English dates are: `-1` yesterday, `1` tomorrow.
const DAY_IN_ENGLISH: &str = r#"
const now = new Date();
const day = new Date(now.getFullYear(), now.getMonth(), now.getDate() + arguments[0]);
const two = (n) => String(n).padStart(2, "0");
return `${two(day.getMonth() + 1)}/${two(day.getDate())}/${day.getFullYear()}`;
"#;

/// Types a date into one of the audit log's date fields and leaves it, as
/// a person does.
fn type_date(app: &RunningApp, testid: &str, typed: &str) -> TestResult {
    let field = app.session.find(&format!("[data-testid={testid}]"))?;
    app.session.clear(&field)?;
    app.session.type_into(&field, typed)?;
    app.session.press_keys("\u{E004}")?;
    Ok(())
}

#[test]
fn the_audit_log_reads_dates_in_the_order_the_chosen_language_writes_them() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![
        tool_call(
            "call_add",
            "bitselect__update_cart_item",
            json!({"skuCode": "MG6W4CH/A", "action": "add", "quantity": 1}),
        ),
        text("Not added."),
    ])?;
    configure(
        data.path(),
        model.base_url(),
        Some(ragent::settings::Language::En),
    )?;
    let app = RunningApp::launch(data.path())?;
    app.send_message("Add an iPhone 17 to my cart")?;
    let call = app.asking_call()?;
    app.decide(&call, "deny")?;

    click(&app, "[data-testid=audit]")?;
    app.wait_for_text("[data-testid=audit-view] thead", "Time")?;
    let from = app.session.find("[data-testid=audit-filter-from]")?;
    assert_eq!(
        app.session.attribute(&from, "placeholder")?.as_deref(),
        Some("MM/DD/YYYY")
    );
    let day = |offset: i64| -> Result<String, Box<dyn Error>> {
        let value = app.session.execute(DAY_IN_ENGLISH, json!([offset]))?;
        Ok(value.as_str().ok_or("no date")?.to_owned())
    };

    // From yesterday, written month first: the denial is listed.
    type_date(&app, "audit-filter-from", &day(-1)?)?;
    app.wait_for_text("[data-testid=audit-view] tbody", "you denied")?;
    // From tomorrow: nothing yet.
    type_date(&app, "audit-filter-from", &day(1)?)?;
    app.wait_for_text(
        "[data-testid=audit-view] .empty",
        "No entries match the filters.",
    )?;
    // Day first is not how English writes a date: the field says so, and
    // the bound is dropped.
    type_date(&app, "audit-filter-from", "31/12/2026")?;
    app.wait_for_text(
        "[data-testid=audit-filter-from-error]",
        "Not a date: write it as MM/DD/YYYY, for example 11/30/2026",
    )?;
    app.wait_for_text("[data-testid=audit-view] tbody", "you denied")?;
    Ok(())
}
