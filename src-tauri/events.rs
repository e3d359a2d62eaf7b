//! Forwards the core's events to the page, and tells the user through the OS
//! when a card waits while the window is in the background.

use ragent::Agent;
use ragent::protocol::{AgentEvent, EventEnvelope};
use tauri::{AppHandle, Emitter, Manager, Runtime, UserAttentionType};
use tauri_plugin_notification::NotificationExt;
use tokio::sync::broadcast::error::RecvError;

/// The one event name the page listens to; its payload is an [`EventEnvelope`].
pub const AGENT_EVENT: &str = "agent-event";
const MAIN_WINDOW: &str = "main";

/// Runs until the core goes away.
pub async fn forward<R: Runtime>(app: AppHandle<R>, agent: Agent) {
    let mut events = agent.subscribe();
    loop {
        match events.recv().await {
            Ok(envelope) => {
                if let Err(error) = app.emit_to(MAIN_WINDOW, AGENT_EVENT, &envelope) {
                    tracing::warn!(%error, "could not send an event to the page");
                }
                if matches!(envelope.event, AgentEvent::ConfirmationRequested { .. }) {
                    notify_if_in_background(&app, &envelope);
                }
            }
            Err(RecvError::Lagged(missed)) => {
                // The page re-reads the transcript when it sees a run stop,
                // so a gap heals itself; say so in the log.
                tracing::warn!(missed, "the page fell behind the core's events");
            }
            Err(RecvError::Closed) => break,
        }
    }
}

fn notify_if_in_background<R: Runtime>(app: &AppHandle<R>, envelope: &EventEnvelope) {
    let Some(window) = app.get_webview_window(MAIN_WINDOW) else {
        return;
    };
    if window.is_focused().unwrap_or(false) {
        return;
    }
    if let Err(error) = window.request_user_attention(Some(UserAttentionType::Informational)) {
        tracing::debug!(%error, "could not mark the window as wanting attention");
    }
    let shown = app
        .notification()
        .builder()
        .title("比特严选助手")
        .body("有一项操作等待你确认")
        .show();
    if let Err(error) = shown {
        tracing::info!(%error, session = %envelope.session_id, "no OS notification for a waiting card");
    }
}
