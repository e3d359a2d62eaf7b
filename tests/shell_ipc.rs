//! The shell in process: the app built on Tauri's mock runtime with its own
//! configuration and capabilities, a real core on a temporary directory,
//! and commands called through the IPC the way the page calls them.

use std::collections::BTreeSet;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use bitselect_assistant::{
    COMMANDS, CORE_DB_FILE, MAIN_WINDOW, StartState, context, forward_to_page, on_run_event,
    run_app,
};
use pretty_assertions::assert_eq;
use ragent::settings::Settings;
use ragent::{Agent, AgentConfig};
use serde_json::{Value, json};
use tauri::ipc::{CallbackFn, InvokeBody, InvokeResponseBody};
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder};
use tauri::webview::InvokeRequest;
use tauri::{App, Manager, RunEvent, WebviewUrl, WebviewWindow, WebviewWindowBuilder};
use tempfile::TempDir;

/// Longest a run may take to reach the model before the test fails (a
/// guard, not a pause).
const RUN_GUARD: Duration = Duration::from_secs(30);

struct Shell {
    app: App<MockRuntime>,
    window: WebviewWindow<MockRuntime>,
    agent: Agent,
    _dir: TempDir,
}

/// The app as it starts, except that the core is opened here (without the
/// shop) instead of in its setup, which the mock runtime never runs.
fn shell_with(settings: Option<Settings>) -> Shell {
    shell_on(mock_builder(), settings)
}

fn shell_on(builder: tauri::Builder<MockRuntime>, settings: Option<Settings>) -> Shell {
    let dir = tempfile::tempdir().unwrap();
    let app = run_app(builder).build(context()).unwrap();
    let mut config = AgentConfig::new(dir.path().join(CORE_DB_FILE));
    config.initial_settings = settings;
    let agent = tauri::async_runtime::block_on(Agent::open(config)).unwrap();
    app.manage(agent.clone());
    let window = window(&app, MAIN_WINDOW);
    Shell {
        app,
        window,
        agent,
        _dir: dir,
    }
}

fn shell() -> Shell {
    shell_with(None)
}

fn window(app: &App<MockRuntime>, label: &str) -> WebviewWindow<MockRuntime> {
    WebviewWindowBuilder::new(app, label, WebviewUrl::default())
        .build()
        .unwrap()
}

/// Calls `command` from `window`'s page with `args` (camelCase keys, as
/// the page's `invoke` sends them). Err is what the page's promise rejects
/// with.
fn invoke(window: &WebviewWindow<MockRuntime>, command: &str, args: Value) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: command.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_owned(),
    };
    get_ipc_response(window, request).map(|body| body.deserialize::<Value>().unwrap())
}

/// Tauri's own refusals: no handler for the command, or no permission.
fn is_unreachable(command: &str, rejection: &Value) -> bool {
    rejection.as_str().is_some_and(|message| {
        message == format!("Command {command} not found")
            || message.contains("not allowed")
            || message.contains("explicitly denied")
    })
}

#[test]
fn a_created_session_is_in_the_list_the_page_gets() {
    let shell = shell();
    let created = invoke(&shell.window, "create_session", json!({})).unwrap();
    let listed = invoke(&shell.window, "list_sessions", json!({})).unwrap();

    let core_list = serde_json::to_value(shell.agent.list_sessions().unwrap()).unwrap();
    assert_eq!(listed, core_list);
    assert_eq!(listed, json!([created]));
}

#[test]
fn the_first_screen_handed_to_the_page_is_what_its_commands_would_answer() {
    let shell = shell();
    for _ in 0..3 {
        invoke(&shell.window, "create_session", json!({})).unwrap();
    }
    let state = StartState::read(&shell.agent).unwrap();
    let handed = serde_json::to_value(&state).unwrap();
    let asked = |command: &str, args: Value| invoke(&shell.window, command, args).unwrap();
    assert_eq!(handed["settings"], asked("get_settings", json!({})));
    assert_eq!(handed["restored"], asked("databases_restored", json!({})));
    let listed = asked("list_sessions", json!({}));
    assert_eq!(handed["sessions"], listed);
    // The session the page opens: the first of the most recently updated.
    let listed = listed.as_array().unwrap();
    let newest = listed
        .iter()
        .map(|s| s["updated_at"].as_i64())
        .max()
        .unwrap();
    let opened = listed
        .iter()
        .find(|s| s["updated_at"].as_i64() == newest)
        .unwrap();
    assert_eq!(
        handed["latest"],
        asked("open_session", json!({ "sessionId": opened["id"] }))
    );
    // No model is set up: the check's answer, asked of no one.
    assert_eq!(handed["model"]["state"], "not_configured");
    assert_eq!(handed["model"], asked("check_model", json!({})));
    // What the page reads: the same, assigned before its own script runs.
    assert_eq!(handed_by(&state.script().unwrap()), handed);
}

#[test]
fn a_set_up_model_is_left_for_the_page_to_check() {
    let (settings, _connection) = silent_model();
    let shell = shell_with(Some(settings));
    let state = StartState::read(&shell.agent).unwrap();
    // Whether it answers may take the network: not at the window's making.
    assert_eq!(state.model, None);
    assert_eq!(handed_by(&state.script().unwrap())["model"], Value::Null);
}

/// The global the handed script sets, read back as the page reads it.
fn handed_by(script: &str) -> Value {
    let json = script
        .strip_prefix("window.__BITSELECT_START__ = ")
        .and_then(|rest| rest.strip_suffix(';'))
        .unwrap();
    serde_json::from_str(json).unwrap()
}

#[test]
fn a_newest_transcript_past_the_cap_is_left_for_the_page_to_open() {
    let shell = shell();
    invoke(&shell.window, "create_session", json!({})).unwrap();
    let state = StartState::read(&shell.agent).unwrap();
    let whole = state.script_within(usize::MAX).unwrap();

    let at_the_cap = handed_by(&state.script_within(whole.len()).unwrap());
    assert_eq!(at_the_cap, serde_json::to_value(&state).unwrap());

    let past_it = handed_by(&state.script_within(whole.len() - 1).unwrap());
    assert_eq!(past_it["latest"], Value::Null);
    assert_eq!(past_it["model"], at_the_cap["model"]);
    assert_eq!(past_it["sessions"], at_the_cap["sessions"]);
    assert_eq!(past_it["settings"], at_the_cap["settings"]);
}

#[test]
fn opening_an_unknown_session_rejects_with_the_cores_code_and_message() {
    let shell = shell();
    let rejection = invoke(
        &shell.window,
        "open_session",
        json!({ "sessionId": "no-such-session" }),
    )
    .unwrap_err();
    assert_eq!(
        rejection,
        json!({ "code": "session_not_found", "message": "session no-such-session not found" })
    );
}

#[test]
fn retrying_a_session_with_nothing_to_retry_rejects_with_its_code() {
    let shell = shell();
    let created = invoke(&shell.window, "create_session", json!({})).unwrap();
    let rejection = invoke(
        &shell.window,
        "retry_run",
        json!({ "sessionId": created["id"] }),
    )
    .unwrap_err();
    assert_eq!(rejection["code"], json!("nothing_to_retry"));
}

#[test]
fn regenerating_a_session_without_an_answer_rejects_with_its_code() {
    let shell = shell();
    let created = invoke(&shell.window, "create_session", json!({})).unwrap();
    let rejection = invoke(
        &shell.window,
        "regenerate_answer",
        json!({ "sessionId": created["id"] }),
    )
    .unwrap_err();
    assert_eq!(rejection["code"], json!("nothing_to_regenerate"));
}

#[test]
fn refused_settings_reject_with_invalid_settings_and_nothing_is_saved() {
    let shell = shell();
    let before = invoke(&shell.window, "get_settings", json!({})).unwrap();
    let edit = json!({
        "model": {
            "base_url": "ftp://models.example",
            "model": "m",
            "api_key": null,
            "extra_headers": {}
        },
        "mcp_servers": {},
        "tool_overrides": {},
        "card_expiry_secs": 600,
        "max_turns_per_run": 5,
        "history_token_budget": 8000,
        "appearance": { "language": null, "theme": "system" }
    });
    let rejection =
        invoke(&shell.window, "save_settings", json!({ "settings": edit })).unwrap_err();
    assert_eq!(
        rejection,
        json!({
            "code": "invalid_settings",
            "message": "the settings cannot be saved: the model base URL \"ftp://models.example\" is not an http(s) URL"
        })
    );
    assert_eq!(
        invoke(&shell.window, "get_settings", json!({})).unwrap(),
        before
    );
}

#[test]
fn the_page_lists_the_models_of_the_provider_it_is_editing() {
    let shell = shell();
    let provider = test_support::model::ScriptedModel::start().unwrap();
    let edit = |base_url: String| {
        json!({ "model": {
            "base_url": base_url,
            "model": "",
            "api_key": { "action": "set", "value": "sk-page" },
            "extra_headers": {}
        }})
    };
    let listed = invoke(&shell.window, "list_models", edit(provider.base_url())).unwrap();
    assert_eq!(
        listed,
        json!([{ "id": "scripted", "context_tokens": null, "history_budget": null }])
    );

    provider.answer_listing(test_support::model::Reply::status(401, "bad key"));
    let refused = invoke(&shell.window, "list_models", edit(provider.base_url())).unwrap_err();
    assert_eq!(refused["code"], "model_unauthorized", "{refused}");
}

/// Every command of the list has a handler and a permission the main
/// window holds: called with no arguments, none is refused by Tauri itself
/// (missing arguments are a different rejection).
#[test]
fn every_command_of_the_list_is_registered_and_granted_to_the_main_window() {
    let shell = shell();
    let unreachable: Vec<(&str, Value)> = COMMANDS
        .iter()
        .filter(|command| **command != "open_logs_folder")
        .filter_map(|command| match invoke(&shell.window, command, json!({})) {
            Err(rejection) if is_unreachable(command, &rejection) => Some((*command, rejection)),
            _ => None,
        })
        .collect();
    assert_eq!(unreachable, Vec::<(&str, Value)>::new());
    // It would open a file manager: its state is left unmanaged here, so
    // reaching it is told by the handler asking for that state.
    let rejection = invoke(&shell.window, "open_logs_folder", json!({})).unwrap_err();
    assert!(
        rejection
            .as_str()
            .is_some_and(|m| m.contains("state not managed")),
        "{rejection}"
    );
}

#[test]
fn a_command_outside_the_list_is_refused() {
    let shell = shell();
    // The core's own step of a sign-in: the page only ever asks `sign_in`,
    // which opens the page the core made.
    let rejection = invoke(
        &shell.window,
        "begin_sign_in",
        json!({"server": "bitselect"}),
    )
    .unwrap_err();
    assert!(is_unreachable("begin_sign_in", &rejection), "{rejection}");
}

#[test]
fn a_window_other_than_the_main_one_cannot_call_the_commands() {
    let shell = shell();
    let other = window(&shell.app, "other");
    let rejection = invoke(&other, "list_sessions", json!({})).unwrap_err();
    assert!(is_unreachable("list_sessions", &rejection), "{rejection}");
}

/// The permissions the main window's capability grants for the app's own
/// commands, as command names.
fn granted_commands() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/capabilities/default.json");
    let capability: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    capability["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|permission| permission.as_str().unwrap())
        // Plugins' and Tauri's own permissions are `prefix:name`.
        .filter(|permission| !permission.contains(':'))
        .map(|permission| {
            permission
                .strip_prefix("allow-")
                .unwrap_or_else(|| panic!("{permission} is not an allow- permission"))
                .replace('-', "_")
        })
        .collect()
}

#[test]
fn the_capability_grants_exactly_the_registered_commands() {
    let registered: BTreeSet<String> = COMMANDS.iter().map(|c| (*c).to_owned()).collect();
    assert_eq!(granted_commands(), registered);
}

/// The build writes a permission file per listed command but never removes
/// one: a file left from a command since taken off the list would still
/// let a capability grant it.
#[test]
fn the_permission_files_are_those_of_the_registered_commands() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("permissions/autogenerated");
    let files: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    let expected: BTreeSet<String> = COMMANDS.iter().map(|c| format!("{c}.toml")).collect();
    assert_eq!(files, expected);
}

/// The page's README documents the commands the page may call: its table
/// names each command of the list once, and no other.
#[test]
fn the_pages_readme_lists_every_command_and_no_other() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/README.md"))
            .unwrap();
    let section = readme
        .split("## Backend commands and events")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("ui/README.md has its commands section");
    let documented: Vec<String> = section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`'))
        .map(|(name, _)| name.to_owned())
        .collect();
    let unique: BTreeSet<String> = documented.iter().cloned().collect();
    assert_eq!(documented.len(), unique.len(), "a command documented twice");
    let registered: BTreeSet<String> = COMMANDS.iter().map(|c| (*c).to_owned()).collect();
    assert_eq!(unique, registered);
}

/// Settings whose model accepts one connection and holds it open without
/// answering, so a run that reaches the model waits there.
fn silent_model() -> (Settings, mpsc::Receiver<TcpStream>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (accepted, connection) = mpsc::channel();
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            let _ = accepted.send(stream);
        }
    });
    let mut settings = Settings::default();
    settings.model.base_url = url;
    settings.model.model = "silent".into();
    (settings, connection)
}

#[test]
fn exiting_the_app_stops_the_run_in_progress() {
    let (settings, connection) = silent_model();
    let shell = shell_with(Some(settings));
    let session = invoke(&shell.window, "create_session", json!({})).unwrap();
    let session_id = session["id"].as_str().unwrap().to_owned();
    invoke(
        &shell.window,
        "send_message",
        json!({ "sessionId": session_id, "text": "hello" }),
    )
    .unwrap();
    let _held = connection
        .recv_timeout(RUN_GUARD)
        .expect("the run reaches the model");
    assert!(shell.agent.is_running(&session_id));

    on_run_event(shell.app.handle(), RunEvent::Exit);

    assert!(!shell.agent.is_running(&session_id));
}

/// What reached the page on its channels: the channel's id and the event.
type Heard = mpsc::Receiver<(u32, Value)>;

/// The shell with its events forwarded, and what its page's channels hear.
fn shell_heard_on_channels(settings: Settings) -> (Shell, Heard) {
    let (heard, hearing) = mpsc::channel();
    let builder = mock_builder().channel_interceptor(move |_, channel, _, body| {
        if let InvokeResponseBody::Json(json) = body {
            let _ = heard.send((channel.0, serde_json::from_str(json).unwrap()));
        }
        true
    });
    let shell = shell_on(builder, Some(settings));
    tauri::async_runtime::spawn(forward_to_page(shell.app.handle().clone(), &shell.agent));
    (shell, hearing)
}

/// The next event the page hears, whichever channel it came on.
fn next_heard(hearing: &Heard) -> (u32, Value) {
    hearing
        .recv_timeout(RUN_GUARD)
        .expect("the page hears an event")
}

#[test]
fn the_page_hears_the_cores_events_on_its_latest_channel() {
    let (settings, _connection) = silent_model();
    let (shell, hearing) = shell_heard_on_channels(settings);
    let first = invoke(&shell.window, "create_session", json!({})).unwrap();
    let second = invoke(&shell.window, "create_session", json!({})).unwrap();

    let subscribe = |channel: u32| {
        let on_event = format!("__CHANNEL__:{channel}");
        invoke(
            &shell.window,
            "subscribe_events",
            json!({ "onEvent": on_event }),
        )
        .unwrap()
    };
    let say_hello = |session: &Value| {
        let message = json!({ "sessionId": session["id"], "text": "hello" });
        invoke(&shell.window, "send_message", message).unwrap()
    };

    subscribe(7);
    say_hello(&first);
    let (channel, envelope) = next_heard(&hearing);
    assert_eq!(channel, 7);
    assert_eq!(envelope["session_id"], first["id"]);
    assert_eq!(envelope["event"]["type"], "run_started");

    // A reload: the new page's channel replaces the old one.
    subscribe(8);
    say_hello(&second);
    // Every event from here on, the first session's too, goes to the new one.
    loop {
        let (channel, envelope) = next_heard(&hearing);
        assert_eq!(channel, 8, "an event went to the replaced page's channel");
        if envelope["session_id"] == second["id"] {
            break;
        }
    }
}
