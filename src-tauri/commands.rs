//! The commands the page may call. Each is a few lines over the core; the
//! core's typed error reaches the page as `{ code, message }`.
//!
//! All but `subscribe_events`, which only keeps the page's channel, are
//! async so they run on the async runtime, where the core spawns its runs.

use ragent::agent::DatabaseRestored;
use ragent::llm::models::ModelInfo;
use ragent::mcp::export::McpExport;
use ragent::mcp::import::ImportPreview;
use ragent::mcp::{ServerStatus, SignInStatus};
use ragent::protocol::{
    AuditEntry, CallDecision, DefinitionChange, InputOutcome, KeyedReply, ModelStatus, SessionInfo,
    ToolPolicyView, Transcript,
};
use ragent::settings_view::{ModelEdit, SettingsEdit, SettingsView};
use ragent::ucp::evidence::KeptMandate;
use ragent::{Agent, AgentError};
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State};

use crate::app_dirs::AppDirs;
use crate::browser::{self, OpenUrlError};
use crate::events::PageEvents;
use crate::logs_folder::{self, OpenFolderError};

/// How many audit rows the page gets when it does not say.
const DEFAULT_AUDIT_LIMIT: u32 = 200;

/// The page's channel for the core's events, from now on; a reloaded page's
/// new channel replaces its old one.
#[tauri::command]
pub fn subscribe_events(on_event: Channel, events: State<'_, PageEvents>) {
    events.subscribe(on_event);
}

#[tauri::command]
pub async fn send_message(
    agent: State<'_, Agent>,
    session_id: String,
    text: String,
) -> Result<String, AgentError> {
    agent.send_message(&session_id, &text)
}

/// Only decisions on calls the core itself put on the pending card are
/// accepted; the core checks the reply id and each call id.
#[tauri::command]
pub async fn respond_confirmation(
    agent: State<'_, Agent>,
    session_id: String,
    reply_id: String,
    decisions: Vec<CallDecision>,
) -> Result<InputOutcome, AgentError> {
    agent.respond(&session_id, &reply_id, decisions).await
}

/// Only an answer to a request for input the core stored and asked is
/// accepted; the core checks it against the request's form before the
/// server sees anything.
#[tauri::command]
pub async fn answer_input(
    agent: State<'_, Agent>,
    session_id: String,
    request_id: String,
    replies: Vec<KeyedReply>,
) -> Result<InputOutcome, AgentError> {
    agent.answer_input(&session_id, &request_id, replies)
}

/// Opens the page of a waiting URL-mode request in the browser: the core
/// gives the address, so the page can open nothing else.
#[tauri::command]
pub async fn open_input_url<R: Runtime>(
    app: AppHandle<R>,
    agent: State<'_, Agent>,
    session_id: String,
    request_id: String,
    key: String,
) -> Result<(), OpenUrlError> {
    let url = agent.input_url(&session_id, &request_id, &key)?;
    browser::open(&app, &url)
}

#[tauri::command]
pub async fn cancel_run(agent: State<'_, Agent>, session_id: String) -> Result<bool, AgentError> {
    agent.cancel_run(&session_id)
}

/// Asks the model again after a failed turn; the core refuses when there
/// is nothing to retry, a run is going or a card waits.
#[tauri::command]
pub async fn retry_run(agent: State<'_, Agent>, session_id: String) -> Result<String, AgentError> {
    agent.retry(&session_id)
}

/// Asks the model for another final answer; the core refuses when the
/// conversation does not end with one, a run is going or a card waits.
#[tauri::command]
pub async fn regenerate_answer(
    agent: State<'_, Agent>,
    session_id: String,
) -> Result<String, AgentError> {
    agent.regenerate(&session_id)
}

#[tauri::command]
pub async fn list_sessions(agent: State<'_, Agent>) -> Result<Vec<SessionInfo>, AgentError> {
    agent.list_sessions()
}

#[tauri::command]
pub async fn create_session(agent: State<'_, Agent>) -> Result<SessionInfo, AgentError> {
    agent.create_session(None)
}

#[tauri::command]
pub async fn open_session(
    agent: State<'_, Agent>,
    session_id: String,
) -> Result<Transcript, AgentError> {
    agent.transcript(&session_id)
}

#[tauri::command]
pub async fn rename_session(
    agent: State<'_, Agent>,
    session_id: String,
    title: String,
) -> Result<SessionInfo, AgentError> {
    agent.rename_session(&session_id, &title)
}

#[tauri::command]
pub async fn delete_session(agent: State<'_, Agent>, session_id: String) -> Result<(), AgentError> {
    agent.delete_session(&session_id)
}

/// The settings without secret values: the page never gets those back.
#[tauri::command]
pub async fn get_settings(agent: State<'_, Agent>) -> Result<SettingsView, AgentError> {
    Ok(agent.settings_view())
}

/// Saves the page's edit: each secret kept, set or cleared as it says.
#[tauri::command]
pub async fn save_settings(
    agent: State<'_, Agent>,
    settings: SettingsEdit,
) -> Result<SettingsView, AgentError> {
    agent.edit_settings(settings).await
}

/// What importing a pasted MCP configuration would add; saves nothing.
#[tauri::command]
pub async fn preview_mcp_import(
    agent: State<'_, Agent>,
    text: String,
) -> Result<ImportPreview, AgentError> {
    Ok(agent.preview_mcp_import(&text))
}

/// Adds the servers of the previewed text in one save, if they are still
/// the ones its preview (`fingerprint`) showed.
#[tauri::command]
pub async fn apply_mcp_import(
    agent: State<'_, Agent>,
    text: String,
    fingerprint: String,
) -> Result<SettingsView, AgentError> {
    agent.apply_mcp_import(&text, &fingerprint).await
}

/// The user's servers in the `mcpServers` shape, secret values left out.
#[tauri::command]
pub async fn export_mcp_config(agent: State<'_, Agent>) -> Result<McpExport, AgentError> {
    Ok(agent.export_mcp_config())
}

#[tauri::command]
pub async fn check_model(agent: State<'_, Agent>) -> Result<ModelStatus, AgentError> {
    Ok(agent.check_model().await)
}

/// The models the provider lists, asked with the model settings as edited
/// on the page (not yet saved).
#[tauri::command]
pub async fn list_models(
    agent: State<'_, Agent>,
    model: ModelEdit,
) -> Result<Vec<ModelInfo>, AgentError> {
    agent.list_models(model).await
}

#[tauri::command]
pub async fn list_tools(agent: State<'_, Agent>) -> Result<Vec<ToolPolicyView>, AgentError> {
    Ok(agent.tool_policies().await)
}

/// What changed in a tool's definition since it was pinned, if anything.
#[tauri::command]
pub async fn tool_definition_change(
    agent: State<'_, Agent>,
    qualified_name: String,
) -> Result<Option<DefinitionChange>, AgentError> {
    agent.tool_definition_change(&qualified_name).await
}

/// The user accepts the definition they were shown (`new_hash`); the core
/// audits it. A call waiting on a card still waits for its own decision.
#[tauri::command]
pub async fn accept_tool_definition(
    agent: State<'_, Agent>,
    qualified_name: String,
    new_hash: String,
) -> Result<(), AgentError> {
    agent
        .accept_tool_definition(&qualified_name, &new_hash)
        .await
}

#[tauri::command]
pub async fn list_audit(
    agent: State<'_, Agent>,
    limit: Option<u32>,
) -> Result<Vec<AuditEntry>, AgentError> {
    agent.audit_log(limit.unwrap_or(DEFAULT_AUDIT_LIMIT))
}

/// Adds the UCP merchant at `address`, read from its profile.
#[tauri::command]
pub async fn add_ucp_merchant(
    agent: State<'_, Agent>,
    address: String,
) -> Result<SettingsView, AgentError> {
    agent.add_ucp_merchant(&address).await
}

/// What this start did about each damaged database (the assistant's, the
/// local shop's); empty when none was.
#[tauri::command]
pub async fn databases_restored(
    agent: State<'_, Agent>,
) -> Result<Vec<DatabaseRestored>, AgentError> {
    Ok(agent.databases_restored())
}

/// The checkout mandates the shopper signed, each verified again.
#[tauri::command]
pub async fn list_mandates(agent: State<'_, Agent>) -> Result<Vec<KeptMandate>, AgentError> {
    agent.mandates()
}

/// Shows the log directory in the OS's file manager.
#[tauri::command]
pub async fn open_logs_folder(dirs: State<'_, AppDirs>) -> Result<(), OpenFolderError> {
    logs_folder::open(&dirs.logs).await
}

/// Each server's state, with its sign-in where it asks for one.
#[tauri::command]
pub async fn server_status(agent: State<'_, Agent>) -> Result<Vec<ServerStatus>, AgentError> {
    Ok(agent.server_status().await)
}

/// Signs in to `server`: the core finds its authorization server and makes
/// the page's address, the system browser opens it, and this answers once
/// the browser comes back to the app (or the sign-in is cancelled or
/// fails). The page never names the address that is opened.
#[tauri::command]
pub async fn sign_in<R: Runtime>(
    app: AppHandle<R>,
    agent: State<'_, Agent>,
    server: String,
) -> Result<SignInStatus, OpenUrlError> {
    let started = agent.begin_sign_in(&server).await?;
    if let Err(error) = browser::open(&app, &started.authorization_url) {
        agent.cancel_sign_in(&server);
        return Err(error);
    }
    Ok(agent.finish_sign_in(&server).await?)
}

/// Stops waiting for the browser; `sign_in` ends as cancelled.
#[tauri::command]
pub async fn cancel_sign_in(agent: State<'_, Agent>, server: String) -> Result<bool, AgentError> {
    Ok(agent.cancel_sign_in(&server))
}

/// The runs waiting for `server`'s sign-in go on without its tools.
#[tauri::command]
pub async fn go_on_without(agent: State<'_, Agent>, server: String) -> Result<(), AgentError> {
    agent.go_on_without(&server);
    Ok(())
}

/// Forgets the tokens kept for `server`.
#[tauri::command]
pub async fn sign_out(agent: State<'_, Agent>, server: String) -> Result<(), AgentError> {
    agent.sign_out(&server).await
}
