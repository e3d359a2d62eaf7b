//! Forwards the core's events to the page, and tells the user through the OS
//! when a card waits while the window is in the background
//! ([`crate::waiting_notice`]).
//!
//! The page subscribes with a channel (`subscribe_events`) rather than
//! listening to a Tauri event: a listener is registered by a script the
//! shell runs in the page, and that first script makes the web view start
//! a JavaScript engine in the app's own process, megabytes of memory and
//! part of the start, while a channel costs nothing until its first event.

use std::sync::{Mutex, PoisonError};

use ragent::Agent;
use ragent::protocol::{AgentEvent, EventEnvelope};
use tauri::ipc::{Channel, InvokeResponseBody};
use tauri::{AppHandle, Manager, Runtime, UserAttentionType};
use tokio::sync::broadcast::error::RecvError;

use crate::MAIN_WINDOW;
use crate::waiting_notice::{WaitingNotice, system_locale};

/// Where the core's events go: the channel of the page's latest
/// subscription. A reloaded page subscribes again, and its new channel
/// replaces the one of the page it replaced.
#[derive(Default)]
pub struct PageEvents {
    channel: Mutex<Option<Channel>>,
}

impl PageEvents {
    pub fn subscribe(&self, channel: Channel) {
        *self.channel.lock().unwrap_or_else(PoisonError::into_inner) = Some(channel);
    }

    /// Sends `envelope` to the subscribed page; before any subscription
    /// there is no page to tell, and it re-reads what it shows when it
    /// subscribes.
    fn send(&self, envelope: &EventEnvelope) {
        let channel = self.channel.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(channel) = channel.as_ref() else {
            return;
        };
        let sent = serde_json::to_string(envelope)
            .map_err(tauri::Error::from)
            .and_then(|json| channel.send(InvokeResponseBody::Json(json)));
        if let Err(error) = sent {
            tracing::warn!(%error, "could not send an event to the page");
        }
    }
}

/// Subscribes to the core's events now, so none sent before the answer is
/// first polled is missed, and answers the forwarding, which runs until
/// the core goes away.
pub fn forward_to_page<R: Runtime>(
    app: AppHandle<R>,
    agent: &Agent,
) -> impl Future<Output = ()> + Send + 'static {
    let mut events = agent.subscribe();
    async move {
        loop {
            match events.recv().await {
                Ok(envelope) => {
                    app.state::<PageEvents>().send(&envelope);
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
    let chosen = app
        .try_state::<Agent>()
        .and_then(|agent| agent.settings().appearance.language);
    WaitingNotice::in_language(chosen, system_locale().as_deref())
        .show(envelope.session_id.clone());
}
