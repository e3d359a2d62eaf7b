//! Moving in from another client, end to end: a Claude Desktop
//! configuration pasted in the settings brings the reference MCP filesystem
//! server (the npm package, started with node); its tools are listed, and
//! as an untrusted server its read asks first: approved, it runs and the
//! file's text reaches the model and the page.

mod support;

use std::error::Error;
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;
use support::model::{ScriptedModel, text, tool_call};
use support::{RunningApp, configure_model};

type TestResult = Result<(), Box<dyn Error>>;

const NOTE: &str = "购物清单：AirPods 5、USB-C 充电器";

fn click(app: &RunningApp, selector: &str) -> TestResult {
    let element = app.session.find(selector)?;
    app.session.click(&element)?;
    Ok(())
}

/// The reference filesystem server's entry point, installed by `npm ci`.
fn filesystem_server() -> Result<PathBuf, Box<dyn Error>> {
    let server = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    if !server.is_file() {
        return Err(format!("{} is missing: run `npm ci`", server.display()).into());
    }
    Ok(server)
}

/// What a user of Claude Desktop has in `claude_desktop_config.json`.
fn claude_desktop_config(shared: &Path) -> Result<String, Box<dyn Error>> {
    Ok(serde_json::to_string_pretty(&json!({
        "mcpServers": {
            "filesystem": {
                "command": "node",
                "args": [filesystem_server()?, shared]
            }
        }
    }))?)
}

/// Pastes `config` into the settings' import and adds its servers, which
/// come in turned off; then turns `server` on in its row and saves, as
/// the page asks. Returns the arguments the preview listed for `server`,
/// one item each.
fn import(app: &RunningApp, config: &str, server: &str) -> Result<Vec<String>, Box<dyn Error>> {
    click(app, "[data-testid=settings]")?;
    click(app, "[data-testid=section-servers]")?;
    click(app, "[data-testid=import-servers]")?;
    let pasted = app.session.find("[data-testid=import-text]")?;
    app.session.type_into(&pasted, config)?;
    click(app, "[data-testid=import-preview]")?;
    let planned = format!("[data-testid=import-server][data-name={server}]");
    app.wait_for_text(&planned, "")?;
    let args = app
        .session
        .find_all(&format!("{planned} [data-testid=import-arg]"))?
        .iter()
        .map(|arg| app.session.text(arg))
        .collect::<Result<Vec<_>, _>>()?;
    click(app, "[data-testid=import-apply]")?;
    app.wait_for_text("[data-testid=import-added]", "都是停用的")?;
    // Added, but nothing runs until the user turns it on: the screen drawn
    // after the import (its row, and the tools listed with it) shows it
    // turned off and offers none of its tools.
    let row = format!("[data-testid=server-form][data-name={server}]");
    app.wait_for_element(&row)?;
    let off = format!("{row} [data-testid=server-disabled]");
    assert_eq!(app.session.count(&format!("{off}:checked"))?, 1);
    assert_eq!(app.session.count(&format!("[data-tool^={server}__]"))?, 0);
    click(app, &off)?;
    click(app, "[data-testid=save-settings]")?;
    Ok(args)
}

fn executable(path: &Path, script: &str) -> TestResult {
    std::fs::write(path, script)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

#[test]
fn a_pasted_claude_desktop_config_brings_its_server_whose_read_asks_and_then_runs() -> TestResult {
    let data = tempfile::tempdir()?;
    let shared = tempfile::tempdir()?;
    let note = shared.path().join("note.txt");
    std::fs::write(&note, NOTE)?;
    let model = ScriptedModel::start(vec![
        tool_call(
            "call_read",
            "filesystem__read_text_file",
            json!({ "path": note }),
        ),
        text("清单上有 AirPods 5 和 USB-C 充电器。"),
    ])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch(data.path())?;

    let args = import(&app, &claude_desktop_config(shared.path())?, "filesystem")?;
    // The preview showed each argument on its own.
    assert_eq!(
        args,
        vec![
            filesystem_server()?.display().to_string(),
            shared.path().display().to_string()
        ]
    );

    // Its tools are listed with the shop's, for a policy per tool.
    click(&app, "[data-testid=section-tools]")?;
    app.wait_for_text("[data-tool=filesystem__read_text_file]", "read_text_file")?;

    click(&app, "[data-testid=nav-chat]")?;
    app.send_message("看看我的购物清单")?;
    let read = app.asking_call()?;
    let shown = app.session.text(&read)?;
    assert!(
        shown.contains("note.txt"),
        "the card shows the path: {shown}"
    );
    app.decide(&read, "approve")?;
    app.wait_for_text("[data-testid=message-assistant]", "USB-C 充电器")?;
    app.wait_for_text("[data-testid=card-call][data-status=succeeded]", "")?;

    // The file's text went to the model as the call's result.
    let last = model.requests().pop().ok_or("no request")?;
    let result = last["messages"]
        .as_array()
        .and_then(|messages| messages.iter().find(|m| m["role"] == "tool"))
        .ok_or("no tool result sent")?;
    assert!(result.to_string().contains("AirPods 5"), "{result}");
    Ok(())
}

#[test]
fn an_app_started_with_a_desktop_sessions_path_finds_a_server_on_the_login_shells_path()
-> TestResult {
    let data = tempfile::tempdir()?;
    let shared = tempfile::tempdir()?;
    // `shopping-list-mcp` lives where only the user's login shell looks.
    let home_bin = tempfile::tempdir()?;
    let node = which("node").ok_or("node is not on PATH")?;
    executable(
        &home_bin.path().join("shopping-list-mcp"),
        &format!(
            "#!/bin/sh\nexec '{}' '{}' '{}'\n",
            node.display(),
            filesystem_server()?.display(),
            shared.path().display()
        ),
    )?;
    let shell = home_bin.path().join("login-shell");
    executable(
        &shell,
        &format!(
            "#!/bin/sh\n# -ilc <command>, as a login shell reading the user's profile\nPATH='{}':\"$PATH\"; export PATH\nexec /bin/sh -c \"$2\"\n",
            home_bin.path().display()
        ),
    )?;
    let model = ScriptedModel::start(vec![])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch_with_env(
        data.path(),
        &[
            ("PATH", OsStr::new("/usr/bin:/bin")),
            ("SHELL", shell.as_os_str()),
        ],
    )?;

    let config = json!({ "mcpServers": { "shopping-list": { "command": "shopping-list-mcp" } } });
    let args = import(&app, &config.to_string(), "shopping-list")?;
    assert_eq!(args, Vec::<String>::new(), "it takes no arguments");
    click(&app, "[data-testid=section-tools]")?;
    app.wait_for_text(
        "[data-tool=shopping-list__read_text_file]",
        "read_text_file",
    )?;
    Ok(())
}

/// The first `name` on this process's PATH.
fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}
