//! The provider's model list (`GET {base_url}/models`), for the first-run
//! and settings screens: it fills the model choice and tells whether the
//! base URL answers and the key is accepted, before anything is saved.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::openai::request_headers;
use crate::settings::ModelSettings;

/// Why the model list could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelListError {
    #[error("set the model base URL first")]
    NotConfigured,
    /// 401 or 403: the key is missing, wrong or not allowed to list models.
    #[error("the provider refused the API key (HTTP {status}): {body}")]
    Unauthorized { status: u16, body: String },
    #[error("could not reach {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("the provider did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the provider answered HTTP {status}: {body}")]
    Http { status: u16, body: String },
    /// A 200 whose body is not an OpenAI-style list (`{"data": [{"id"}]}`).
    #[error("the provider's answer is not a model list: {0}")]
    Malformed(String),
    #[error("{0}")]
    Header(String),
}

/// How much of an error body is kept for the message.
const BODY_CHARS: usize = 300;

#[derive(Deserialize)]
struct ModelList {
    data: Vec<ModelEntry>,
}

#[derive(Deserialize)]
struct ModelEntry {
    id: String,
    /// The context window, under the names providers give it: OpenRouter
    /// and Together `context_length`, others `context_window` or
    /// `max_context_length`, vLLM `max_model_len`.
    #[serde(
        alias = "context_window",
        alias = "max_context_length",
        alias = "max_model_len"
    )]
    context_length: Option<u64>,
}

/// A model the provider lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ModelInfo {
    pub id: String,
    /// Its context window in tokens, when the provider says.
    pub context_tokens: Option<u32>,
    /// The history budget that leaves room in that window for the tools
    /// and the answer ([`history_budget_for`]), when the window is known.
    pub history_budget: Option<u32>,
}

/// The history budget for a model whose context window holds `context`
/// tokens: the window less room for the instructions, the tools and the
/// answer (a quarter of it, at least 8,000 tokens), and never under half
/// of the window or the settings' own minimum.
pub fn history_budget_for(context: u32) -> u32 {
    let room = (context / 4).max(8_000);
    context.saturating_sub(room).max(context / 2).max(1_000)
}

/// The models the provider lists, sorted by id, each once. The whole
/// exchange, body included, must end within `timeout`.
pub async fn list_models(
    settings: &ModelSettings,
    timeout: Duration,
) -> Result<Vec<ModelInfo>, ModelListError> {
    let base = settings.base_url.trim().trim_end_matches('/');
    if base.is_empty() {
        return Err(ModelListError::NotConfigured);
    }
    let headers = request_headers(settings).map_err(|e| ModelListError::Header(e.to_string()))?;
    let url = format!("{base}/models");
    let unreachable = |e: reqwest::Error| ModelListError::Unreachable {
        url: url.clone(),
        message: e.to_string(),
    };
    let exchange = async {
        let response = reqwest::Client::new()
            .get(&url)
            .headers(headers)
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status().as_u16();
        let body = response.text().await.map_err(unreachable)?;
        Ok((status, body))
    };
    let (status, body) = tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| ModelListError::Timeout(timeout))??;
    let short = || body.chars().take(BODY_CHARS).collect::<String>();
    match status {
        200..=299 => read_list(&body),
        401 | 403 => Err(ModelListError::Unauthorized {
            status,
            body: short(),
        }),
        _ => Err(ModelListError::Http {
            status,
            body: short(),
        }),
    }
}

fn read_list(body: &str) -> Result<Vec<ModelInfo>, ModelListError> {
    let list: ModelList =
        serde_json::from_str(body).map_err(|e| ModelListError::Malformed(e.to_string()))?;
    let mut models: Vec<ModelInfo> = list
        .data
        .into_iter()
        .filter(|entry| !entry.id.trim().is_empty())
        .map(|entry| {
            // A window of 0 or one beyond u32 is no window anyone has.
            let context_tokens = entry
                .context_length
                .and_then(|n| u32::try_from(n).ok())
                .filter(|&n| n > 0);
            ModelInfo {
                id: entry.id.trim().to_string(),
                context_tokens,
                history_budget: context_tokens.map(history_budget_for),
            }
        })
        .collect();
    models.sort_by(|a, b| a.id.cmp(&b.id));
    models.dedup_by(|a, b| a.id == b.id);
    Ok(models)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn ids(models: &[ModelInfo]) -> Vec<&str> {
        models.iter().map(|m| m.id.as_str()).collect()
    }

    #[test]
    fn a_list_gives_its_ids_sorted_and_once_each() {
        let body = r#"{"object":"list","data":[{"id":"qwen-plus"},{"id":"deepseek-chat","owned_by":"x"},{"id":"qwen-plus"}]}"#;
        assert_eq!(
            ids(&read_list(body).unwrap()),
            vec!["deepseek-chat", "qwen-plus"]
        );
    }

    #[test]
    fn a_context_window_under_any_of_its_names_gives_the_history_budget() {
        let body = r#"{"data":[
            {"id":"openrouter/a","context_length":128000},
            {"id":"b","context_window":32768},
            {"id":"c","max_context_length":8192},
            {"id":"vllm/d","max_model_len":4096},
            {"id":"e"},
            {"id":"f","context_length":0}
        ]}"#;
        let windows: Vec<(String, Option<u32>, Option<u32>)> = read_list(body)
            .unwrap()
            .into_iter()
            .map(|m| (m.id, m.context_tokens, m.history_budget))
            .collect();
        assert_eq!(
            windows,
            vec![
                ("b".into(), Some(32_768), Some(24_576)),
                ("c".into(), Some(8_192), Some(4_096)),
                ("e".into(), None, None),
                ("f".into(), None, None),
                ("openrouter/a".into(), Some(128_000), Some(96_000)),
                ("vllm/d".into(), Some(4_096), Some(2_048)),
            ]
        );
    }

    #[test]
    fn the_history_budget_leaves_room_and_keeps_the_settings_minimum() {
        assert_eq!(history_budget_for(1_000_000), 750_000);
        assert_eq!(history_budget_for(16_000), 8_000);
        assert_eq!(history_budget_for(1_500), 1_000);
    }

    #[test]
    fn an_answer_that_is_not_a_list_is_malformed() {
        for body in [
            "<html>gateway</html>",
            r#"{"models": []}"#,
            r#"{"data": [{"name": "x"}]}"#,
        ] {
            assert!(
                matches!(read_list(body), Err(ModelListError::Malformed(_))),
                "{body}"
            );
        }
    }
}
