//! The first-run and settings screens: the provider's model list asked
//! with the settings being edited (nothing saved), its failures as typed
//! errors, and the page's language and theme kept with the settings.

use std::collections::BTreeMap;
use std::time::Duration;

use pretty_assertions::assert_eq;
use ragent::AgentError;
use ragent::llm::models::{ModelInfo, ModelListError, list_models};
use ragent::protocol::ErrorCode;
use ragent::settings::{Appearance, Language, ModelSettings, Theme};
use ragent::settings_view::{ModelEdit, Secret};
use serde_json::json;

use crate::support::*;
use test_support::Reply;

fn edit(base_url: String, api_key: Option<Secret>) -> ModelEdit {
    ModelEdit {
        base_url,
        model: String::new(),
        api_key,
        extra_headers: BTreeMap::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_list_is_asked_with_the_edited_key_and_nothing_is_saved() {
    let h = Harness::start(Setup::bare()).await;
    let provider = ScriptedModel::start().unwrap();
    provider.answer_listing(
        Reply::status(
            200,
            json!({"object": "list", "data": [
                {"id": "qwen-plus", "object": "model", "context_window": 131072},
                {"id": "deepseek-chat", "object": "model"},
            ]})
            .to_string(),
        )
        .header("content-type", "application/json"),
    );
    let before = h.agent.settings();

    let models = h
        .agent
        .list_models(edit(
            provider.base_url(),
            Some(Secret::Set {
                value: "sk-edited".into(),
            }),
        ))
        .await
        .unwrap();

    assert_eq!(
        models,
        vec![
            ModelInfo {
                id: "deepseek-chat".into(),
                context_tokens: None,
                history_budget: None
            },
            ModelInfo {
                id: "qwen-plus".into(),
                context_tokens: Some(131_072),
                history_budget: Some(98_304)
            },
        ]
    );
    let asked = provider.listing_headers();
    assert_eq!(asked.len(), 1);
    let authorization = asked[0].iter().find(|(name, _)| name == "authorization");
    assert_eq!(
        authorization.map(|(_, v)| v.as_str()),
        Some("Bearer sk-edited")
    );
    assert_eq!(h.agent.settings(), before, "listing saves nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_key_is_the_stored_one() {
    let h = Harness::start(Setup::bare()).await;
    let models = h
        .agent
        .list_models(edit(h.model.base_url(), Some(Secret::Keep)))
        .await
        .unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, vec!["scripted"]);
    let asked = h.model.listing_headers();
    let authorization = asked[0].iter().find(|(name, _)| name == "authorization");
    assert_eq!(
        authorization.map(|(_, v)| v.as_str()),
        Some("Bearer test-key")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_is_unauthorized() {
    let h = Harness::start(Setup::bare()).await;
    h.model.answer_listing(Reply::status(
        401,
        r#"{"error":{"message":"Incorrect API key provided"}}"#,
    ));
    let error = h
        .agent
        .list_models(edit(
            h.model.base_url(),
            Some(Secret::Set {
                value: "sk-wrong".into(),
            }),
        ))
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::ModelUnauthorized);
    assert!(
        matches!(&error, AgentError::ModelList(ModelListError::Unauthorized { status: 401, body }) if body.contains("Incorrect API key")),
        "{error:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_nobody_answers_is_unreachable() {
    let h = Harness::start(Setup::bare()).await;
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let error = h
        .agent
        .list_models(edit(format!("http://{closed}/v1"), None))
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::ModelUnreachable, "{error:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_is_not_a_model_list_is_malformed() {
    let h = Harness::start(Setup::bare()).await;
    h.model
        .answer_listing(Reply::status(200, "<html>captive portal</html>"));
    let error = h
        .agent
        .list_models(edit(h.model.base_url(), Some(Secret::Keep)))
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::ModelListMalformed, "{error:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base_url_that_is_not_http_is_refused_before_anything_is_sent() {
    let h = Harness::start(Setup::bare()).await;
    let error = h
        .agent
        .list_models(edit("api.deepseek.com".into(), None))
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidSettings);
    assert!(h.model.listing_headers().is_empty());
}

#[tokio::test]
async fn a_provider_that_does_not_answer_in_time_times_out() {
    let provider = ScriptedModel::start().unwrap();
    provider.answer_listing(Reply::status(200, "{}").delay(Duration::from_secs(10)));
    let settings = ModelSettings {
        base_url: provider.base_url(),
        ..ModelSettings::default()
    };
    let limit = Duration::from_millis(200);
    assert_eq!(
        list_models(&settings, limit).await,
        Err(ModelListError::Timeout(limit))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_data_dir_follows_the_system_and_a_chosen_language_and_theme_outlive_a_restart() {
    let mut h = Harness::start(Setup::bare()).await;
    assert_eq!(
        h.agent.settings_view().settings.appearance,
        Appearance {
            language: None,
            theme: Theme::System
        }
    );
    let chosen = Appearance {
        language: Some(Language::En),
        theme: Theme::Dark,
    };
    let mut settings = h.agent.settings();
    settings.appearance = chosen;
    h.agent.save_settings(settings).await.unwrap();

    h.restart(Setup::bare()).await;

    assert_eq!(h.agent.settings_view().settings.appearance, chosen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_saved_key_is_not_sent_to_another_base_url_until_it_is_given_again() {
    let h = Harness::start(Setup::bare()).await;
    let elsewhere = ScriptedModel::start().unwrap();
    elsewhere.answer_listing(
        Reply::status(200, json!({"object": "list", "data": []}).to_string())
            .header("content-type", "application/json"),
    );
    let error = h
        .agent
        .list_models(edit(elsewhere.base_url(), Some(Secret::Keep)))
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidSettings);
    assert!(error.to_string().contains("give it again"), "{error}");
    assert!(
        elsewhere.listing_headers().is_empty(),
        "nothing was sent to the other address"
    );

    h.agent
        .list_models(edit(
            elsewhere.base_url(),
            Some(Secret::Set {
                value: "sk-for-elsewhere".into(),
            }),
        ))
        .await
        .unwrap();
    let asked = elsewhere.listing_headers();
    let authorization = asked[0].iter().find(|(name, _)| name == "authorization");
    assert_eq!(
        authorization.map(|(_, v)| v.as_str()),
        Some("Bearer sk-for-elsewhere")
    );
}
