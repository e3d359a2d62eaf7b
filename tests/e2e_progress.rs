//! Long work is visible in the window: while a call runs, its chip shows
//! what its server says of its progress, and that goes when the call ends.

mod support;

use std::error::Error;

use serde_json::json;
use support::model::{ScriptedModel, text, tool_call};
use support::words::{WordsServer, add_words_server, calls_made};
use support::{RunningApp, configure_model};

#[test]
fn a_running_calls_chip_shows_its_servers_progress_until_the_call_ends()
-> Result<(), Box<dyn Error>> {
    let data = tempfile::tempdir()?;
    let description = data.path().join("look_up.txt");
    let calls = data.path().join("calls.txt");
    let finish = data.path().join("finish");
    std::fs::write(&description, "Look a word up in the dictionary.")?;
    let model = ScriptedModel::start(vec![
        tool_call("call_apple", "words__look_up", json!({"word": "苹果"})),
        text("查到了：苹果。"),
    ])?;
    configure_model(data.path(), model.base_url())?;
    add_words_server(
        data.path(),
        &WordsServer {
            description: &description,
            calls: &calls,
            finish: Some(&finish),
        },
    )?;

    let app = RunningApp::launch(data.path())?;
    app.send_message("查一下苹果")?;
    // The server holds the call until the finish file exists: the chip can
    // only show this while the call runs.
    app.wait_for_text(
        "[data-testid=tool-chip][data-status=running] [data-testid=call-progress]",
        "50% · 查到一半",
    )?;
    assert_eq!(calls_made(&calls)?, "苹果\n");

    std::fs::write(&finish, "")?;
    app.wait_for_text("[data-testid=message-assistant]", "查到了：苹果")?;
    let chip = app.session.find("[data-testid=tool-chip]")?;
    assert_eq!(
        app.session.attribute(&chip, "data-status")?.as_deref(),
        Some("succeeded")
    );
    let progress = app.session.find_in(&chip, "[data-testid=call-progress]")?;
    assert_eq!(
        app.session.text(&progress)?,
        "",
        "the news went with the call"
    );
    Ok(())
}
