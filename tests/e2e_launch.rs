//! The built app opens its window and shows its page.

mod support;

use support::RunningApp;

#[test]
fn the_app_opens_its_window_with_the_chat_page() -> Result<(), Box<dyn std::error::Error>> {
    let data = tempfile::tempdir()?;
    let app = RunningApp::launch(data.path())?;

    // The page speaks the system's language on a first run; the window
    // keeps the app's registered name.
    let heading = app.session.find("h1")?;
    let lang = app.session.execute(
        "return document.documentElement.lang;",
        serde_json::json!([]),
    )?;
    let expected = if lang == "en" {
        "Bit Select Assistant"
    } else {
        "比特严选助手"
    };
    assert_eq!(
        app.session.text(&heading)?,
        expected,
        "page language {lang}"
    );
    assert_eq!(app.session.title()?, "比特严选助手");
    app.save_screenshot("launch")?;
    Ok(())
}
