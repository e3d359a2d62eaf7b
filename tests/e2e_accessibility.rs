//! Accessibility measured in the real window with axe-core (the npm
//! package, loaded into the page by WebDriver): no critical or serious
//! violation on the first-run page, the chat with a card, the settings and
//! the audit log, in the light and the dark theme.

mod support;

use std::error::Error;
use std::path::Path;

use serde_json::{Value, json};
use support::model::{ScriptedModel, text, tool_call};
use support::{RunningApp, configure_model};

type TestResult = Result<(), Box<dyn Error>>;

const IPHONE: &str = "MG6W4CH/A";

/// Runs axe over the whole document and answers its violations of
/// critical or serious impact, each with the nodes it found.
const RUN_AXE: &str = r#"
const done = arguments[arguments.length - 1];
axe.run(document, { resultTypes: ["violations"] }).then(
  (results) => done(results.violations
    .filter((v) => v.impact === "critical" || v.impact === "serious")
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })),
    }))),
  (error) => done({ error: String(error) }),
);
"#;

fn axe_source() -> Result<String, Box<dyn Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).map_err(|error| {
        format!(
            "{}: {error}; `npm ci` installs axe-core (scripts/test runs it)",
            path.display()
        )
        .into()
    })
}

/// The page's serious and critical violations in both themes, as lines
/// naming the page, the theme, the rule and each node.
fn violations(app: &RunningApp, page: &str) -> Result<Vec<String>, Box<dyn Error>> {
    // The page keeps axe once loaded; load it the first time only.
    let loaded = app
        .session
        .execute("return typeof axe !== 'undefined';", json!([]))?;
    if loaded != Value::Bool(true) {
        app.session
            .execute(&format!("{}\nreturn true;", axe_source()?), json!([]))?;
    }
    let mut found = Vec::new();
    for theme in ["light", "dark"] {
        app.force_theme(theme)?;
        let answer = app.session.execute_async(RUN_AXE, json!([]))?;
        if let Some(error) = answer.get("error") {
            return Err(format!("axe failed on {page} ({theme}): {error}").into());
        }
        for violation in answer.as_array().ok_or("axe answered no list")? {
            let nodes = violation["nodes"].as_array().cloned().unwrap_or_default();
            for node in nodes {
                found.push(format!(
                    "{page} ({theme}): {} [{}] {}: {} — {}",
                    violation["id"].as_str().unwrap_or_default(),
                    violation["impact"].as_str().unwrap_or_default(),
                    violation["help"].as_str().unwrap_or_default(),
                    node["target"].as_str().unwrap_or_default(),
                    node["summary"]
                        .as_str()
                        .unwrap_or_default()
                        .replace('\n', " "),
                ));
            }
        }
    }
    app.force_theme("light")?;
    Ok(found)
}

#[test]
fn the_first_run_page_has_no_serious_accessibility_violation() -> TestResult {
    let data = tempfile::tempdir()?;
    let app = RunningApp::launch(data.path())?;
    app.wait_for_element("[data-testid=first-run]")?;
    let found = violations(&app, "first run")?;
    assert!(found.is_empty(), "{}", found.join("\n"));
    Ok(())
}

#[test]
fn the_chat_with_a_card_the_settings_and_the_audit_log_have_no_serious_accessibility_violation()
-> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![
        tool_call(
            "call_add",
            "bitselect__update_cart_item",
            json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
        ),
        text("已加入购物车。"),
    ])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;
    app.send_message("把 iPhone 17 加入购物车")?;
    app.asking_call()?;
    let mut found = violations(&app, "chat with a card")?;

    app.session
        .click(&app.session.find("[data-testid=settings]")?)?;
    app.wait_for_element("[data-testid=save-settings]")?;
    found.extend(violations(&app, "settings")?);

    app.session
        .click(&app.session.find("[data-testid=audit]")?)?;
    app.wait_for_element("[data-testid=audit-view]")?;
    found.extend(violations(&app, "audit log")?);

    assert!(found.is_empty(), "{}", found.join("\n"));
    Ok(())
}
