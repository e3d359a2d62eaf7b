//! The provider's model list (`GET {base_url}/models`), for the first-run
//! and settings screens: it fills the model choice and tells whether the
//! base URL answers and the key is accepted, before anything is saved.

use std::time::Duration;

use serde::Deserialize;

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
}

/// The ids the provider lists, sorted, each once. The whole exchange,
/// body included, must end within `timeout`.
pub async fn list_models(
    settings: &ModelSettings,
    timeout: Duration,
) -> Result<Vec<String>, ModelListError> {
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

fn read_list(body: &str) -> Result<Vec<String>, ModelListError> {
    let list: ModelList =
        serde_json::from_str(body).map_err(|e| ModelListError::Malformed(e.to_string()))?;
    let mut ids: Vec<String> = list
        .data
        .into_iter()
        .map(|entry| entry.id.trim().to_string())
        .filter(|id| !id.is_empty())
        .collect();
    ids.sort();
    ids.dedup();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_list_gives_its_ids_sorted_and_once_each() {
        let body = r#"{"object":"list","data":[{"id":"qwen-plus"},{"id":"deepseek-chat","owned_by":"x"},{"id":"qwen-plus"}]}"#;
        assert_eq!(read_list(body).unwrap(), vec!["deepseek-chat", "qwen-plus"]);
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
