//! A model that fails a turn, end to end: the chat says what happened in
//! the user's language with a way out, Retry brings the answer, and a
//! configured user is never sent to the first-run page.

mod support;

use std::error::Error;

use support::model::{ScriptedModel, text};
use support::{RunningApp, configure_model};
use test_support::Reply;

type TestResult = Result<(), Box<dyn Error>>;

/// The app's client tries a 5xx four times (three retries) before the
/// turn fails.
const ATTEMPTS: usize = 4;

#[test]
fn a_server_error_shows_a_message_with_retry_and_retrying_brings_the_answer() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(Vec::new())?;
    for _ in 0..ATTEMPTS {
        model.push(
            Reply::status(500, r#"{"error":{"message":"upstream overloaded"}}"#)
                .header("x-request-id", "req-e2e-500"),
        );
    }
    model.push_turn(text("推荐 Sony WH-1000XM6，降噪出色。"));
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;

    app.send_message("推荐一款降噪耳机")?;
    app.wait_for_text("[data-testid=model-error-message]", "模型服务内部出错")?;
    let retry = app.session.find("[data-testid=model-error-retry]")?;
    assert_eq!(app.session.text(&retry)?, "重试");
    let settings = app.session.find("[data-testid=model-error-settings]")?;
    assert_eq!(app.session.text(&settings)?, "打开设置");
    let summary = app
        .session
        .find("[data-testid=model-error-details] summary")?;
    app.session.click(&summary)?;
    app.wait_for_text("[data-testid=model-error-request-id]", "req-e2e-500")?;
    app.wait_for_text("[data-testid=model-error-raw]", "upstream overloaded")?;
    app.wait_for_text("[data-testid=model-error-status]", "500")?;
    let composer = app.session.find("[data-testid=composer-input]")?;
    assert_eq!(app.session.attribute(&composer, "disabled")?, None);

    app.screenshots_for_docs("model-error")?;

    app.session.click(&retry)?;
    app.wait_for_text("[data-testid=message-assistant]", "Sony WH-1000XM6")?;

    assert_eq!(
        app.session.count("[data-testid=message-user]")?,
        1,
        "the question is shown once"
    );
    assert_eq!(
        app.session.count("[data-testid=first-run]")?,
        0,
        "the first-run page was shown"
    );
    let last = model.requests().pop().ok_or("no request")?;
    let roles: Vec<&str> = last["messages"]
        .as_array()
        .ok_or("no messages")?
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(roles, vec!["system", "user"], "the question went once");
    Ok(())
}

#[test]
fn a_failed_turn_is_still_shown_with_retry_after_the_app_is_reopened() -> TestResult {
    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(Vec::new())?;
    model.push(
        Reply::status(401, r#"{"error":{"message":"invalid api key"}}"#)
            .header("x-request-id", "req-e2e-401"),
    );
    model.push_turn(text("推荐 AirPods Pro 3。"));
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;
    app.send_message("推荐一款降噪耳机")?;
    app.wait_for_text("[data-testid=model-error-message]", "拒绝了密钥")?;
    drop(app);

    let app = RunningApp::launch(data.path())?;
    app.wait_for_text("[data-testid=model-error-message]", "拒绝了密钥")?;
    let retry = app.session.find("[data-testid=model-error-retry]")?;
    app.session.click(&retry)?;
    app.wait_for_text("[data-testid=message-assistant]", "AirPods Pro 3")?;
    assert_eq!(
        app.session.count("[data-testid=model-error]")?,
        0,
        "the answered failure is still shown"
    );
    drop(app);

    // Answered: a reopened chat shows the answer, not the old failure.
    let app = RunningApp::launch(data.path())?;
    app.wait_for_text("[data-testid=message-assistant]", "AirPods Pro 3")?;
    assert_eq!(
        app.session.count("[data-testid=model-error]")?,
        0,
        "the answered failure came back"
    );
    Ok(())
}
