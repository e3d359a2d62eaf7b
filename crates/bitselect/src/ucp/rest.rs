//! The checkout capability over the standard's REST binding, under
//! [`REST_PREFIX`]: create (`POST /checkout-sessions`), get, update
//! (`PUT`), cancel (`POST .../cancel`) and complete (`POST .../complete`,
//! with the shopper's `ap2.checkout_mandate`, made out to the shop's
//! origin), each answered with the signed checkout; the business profile
//! at [`PROFILE_PATH`]; and the shop's own device-key routes.
//!
//! Each request acts for the same user an MCP call from it would (the
//! demo user, or the subject the sign-in layer in front set). An
//! `Idempotency-Key` header makes a write answer its first result again
//! when repeated; another body under the same key gets 409. Failures are
//! the standard's error response: `ucp.status` `error` and a message.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::Value;

use super::devices::BindingToken;
use super::failure::{self, Failure};
use super::names::{CHECKOUT, ORDERS_PATH, PROFILE_PATH, REST_PREFIX};
use super::negotiation::{NegotiationError, Negotiator, parse_agent_header};
use super::profile::business_profile;
use crate::callers::Callers;
use crate::error::{Result, ShopError};
use crate::shop::{Shop, Written};
use crate::users::{AccessToken, Subject};
use ap2::jws::Jwk;

/// Where the shopper's app binds its device key (the shop's own route,
/// beside the standard's): `POST` a `{"jwk": ...}`, `DELETE .../<id>`.
pub const DEVICES_PATH: &str = "/account/devices";

/// The header that names the platform's profile.
const UCP_AGENT: &str = "ucp-agent";

/// The header a platform keys a write with.
const IDEMPOTENCY_KEY: &str = "idempotency-key";

#[derive(Clone)]
struct Rest {
    shop: Shop,
    callers: Callers,
    negotiator: Arc<Negotiator>,
    /// The origin clients reach the shop by; `None`: the request's `Host`.
    origin: Option<String>,
}

/// The checkout routes (to guard with sign-in where the shop requires it)
/// and the profile route (public, as discovery must be).
pub fn routes(
    shop: Shop,
    callers: Callers,
    origin: Option<String>,
) -> (axum::Router, axum::Router) {
    let state = Rest {
        shop,
        callers,
        negotiator: Arc::new(Negotiator::default()),
        origin,
    };
    let sessions = format!("{REST_PREFIX}/checkout-sessions");
    let checkout = axum::Router::new()
        .route(&sessions, axum::routing::post(create))
        .route(
            &format!("{sessions}/{{id}}"),
            axum::routing::get(get).put(update),
        )
        .route(
            &format!("{sessions}/{{id}}/cancel"),
            axum::routing::post(cancel),
        )
        .route(
            &format!("{sessions}/{{id}}/complete"),
            axum::routing::post(complete),
        )
        .route(&format!("{ORDERS_PATH}/{{id}}"), axum::routing::get(order))
        .route(DEVICES_PATH, axum::routing::post(bind_device))
        .route(
            &format!("{DEVICES_PATH}/{{id}}"),
            axum::routing::delete(revoke_device),
        )
        .with_state(state.clone());
    let profile = axum::Router::new()
        .route(PROFILE_PATH, axum::routing::get(profile))
        .with_state(state);
    (checkout, profile)
}

async fn profile(State(rest): State<Rest>, headers: HeaderMap) -> Response {
    let Some(origin) = rest.origin_of(&headers) else {
        return no_host();
    };
    let shop = rest.shop.clone();
    match tokio::task::spawn_blocking(move || shop.signing_keys()).await {
        Ok(Ok(keys)) => {
            let signs_in = matches!(rest.callers, Callers::PerRequest);
            let mut response = Json(business_profile(&origin, &keys, signs_in)).into_response();
            // Keys rotate: a platform may keep the profile for minutes.
            response.headers_mut().insert(
                header::CACHE_CONTROL,
                header::HeaderValue::from_static("public, max-age=300"),
            );
            response
        }
        Ok(Err(failure)) => shop_failure(&failure),
        Err(_) => internal(),
    }
}

async fn create(
    State(rest): State<Rest>,
    subject: Option<Extension<Subject>>,
    headers: HeaderMap,
    body: std::result::Result<Json<Value>, JsonRejection>,
) -> Response {
    keyed_write(
        &rest,
        subject,
        &headers,
        body,
        StatusCode::CREATED,
        |shop, body, key| shop.create_checkout(&body, key),
    )
    .await
}

async fn get(
    State(rest): State<Rest>,
    subject: Option<Extension<Subject>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let read = rest
        .run_negotiated(subject, &headers, move |shop| {
            shop.get_checkout(&id).map(|value| Written {
                value,
                replayed: false,
            })
        })
        .await;
    written(read, StatusCode::OK)
}

async fn update(
    State(rest): State<Rest>,
    subject: Option<Extension<Subject>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: std::result::Result<Json<Value>, JsonRejection>,
) -> Response {
    keyed_write(
        &rest,
        subject,
        &headers,
        body,
        StatusCode::OK,
        move |shop, body, key| shop.update_checkout(&id, &body, key),
    )
    .await
}

/// A write with a JSON body and maybe an idempotency key: the body read
/// (or refused), `write` run for the request's user, its answer as
/// `status`.
async fn keyed_write(
    rest: &Rest,
    subject: Option<Extension<Subject>>,
    headers: &HeaderMap,
    body: std::result::Result<Json<Value>, JsonRejection>,
    status: StatusCode,
    write: impl FnOnce(&Shop, Value, Option<&str>) -> Result<Written<Value>> + Send + 'static,
) -> Response {
    let body = match body {
        Ok(Json(body)) => body,
        Err(rejection) => return bad_body(&rejection),
    };
    let key = idempotency_key(headers);
    let outcome = rest
        .run_negotiated(subject, headers, move |shop| {
            write(shop, body, key.as_deref())
        })
        .await;
    written(outcome, status)
}

async fn cancel(
    State(rest): State<Rest>,
    subject: Option<Extension<Subject>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let key = idempotency_key(&headers);
    let outcome = rest
        .run_negotiated(subject, &headers, move |shop| {
            shop.cancel_checkout(&id, key.as_deref())
        })
        .await;
    written(outcome, StatusCode::OK)
}

async fn complete(
    State(rest): State<Rest>,
    subject: Option<Extension<Subject>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: std::result::Result<Json<Value>, JsonRejection>,
) -> Response {
    let Some(audience) = rest.origin_of(&headers) else {
        return no_host();
    };
    keyed_write(
        &rest,
        subject,
        &headers,
        body,
        StatusCode::OK,
        move |shop, body, key| {
            let mandate = body["ap2"]["checkout_mandate"].as_str();
            shop.complete_checkout(&id, mandate, &audience, key)
        },
    )
    .await
}

async fn order(
    State(rest): State<Rest>,
    subject: Option<Extension<Subject>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(origin) = rest.origin_of(&headers) else {
        return no_host();
    };
    match rest
        .run(subject, move |shop| shop.get_checkout_order(&id, &origin))
        .await
    {
        Ok(order) => Json(order).into_response(),
        Err(failure) => shop_failure(&failure),
    }
}

async fn bind_device(
    State(rest): State<Rest>,
    subject: Option<Extension<Subject>>,
    token: Option<Extension<AccessToken>>,
    body: std::result::Result<Json<Value>, JsonRejection>,
) -> Response {
    let body = match body {
        Ok(Json(body)) => body,
        Err(rejection) => return bad_body(&rejection),
    };
    let jwk: Jwk = match body.get("jwk").cloned().map(serde_json::from_value) {
        Some(Ok(jwk)) => jwk,
        _ => {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_input",
                "请求体须为 {\"jwk\": 公钥}".to_owned(),
            );
        }
    };
    // Behind sign-in the layer set the token; without sign-in there is none.
    let signed_in = matches!(rest.callers, Callers::PerRequest);
    let token = token.map(|Extension(token)| token);
    if signed_in && token.is_none() {
        return shop_failure(&ShopError::Unauthenticated);
    }
    let bound = rest
        .run(subject, move |shop| {
            let binding = token.as_ref().map(|token| BindingToken {
                id: token.id.as_deref(),
                issued_at_secs: token.issued_at_secs,
            });
            shop.bind_device(&jwk, binding)
        })
        .await;
    match bound {
        Ok(device) => (StatusCode::CREATED, Json(device)).into_response(),
        Err(failure) => shop_failure(&failure),
    }
}

async fn revoke_device(
    State(rest): State<Rest>,
    subject: Option<Extension<Subject>>,
    Path(id): Path<String>,
) -> Response {
    match rest.run(subject, move |shop| shop.revoke_device(&id)).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(failure) => shop_failure(&failure),
    }
}

impl Rest {
    /// The origin clients reach the shop by: the one it was told, else
    /// `http://<Host>` of the request (`no_host` when there is neither).
    fn origin_of(&self, headers: &HeaderMap) -> Option<String> {
        let host = || {
            let host = headers.get(header::HOST)?.to_str().ok()?;
            Some(format!("http://{host}"))
        };
        self.origin.clone().or_else(host)
    }

    /// Runs a checkout `call` for the request's user, the shop shaped by
    /// the capabilities negotiated with the platform its `UCP-Agent`
    /// header names; a failed negotiation or call is the answer.
    async fn run_negotiated<T: Send + 'static>(
        &self,
        subject: Option<Extension<Subject>>,
        headers: &HeaderMap,
        call: impl FnOnce(&Shop) -> Result<T> + Send + 'static,
    ) -> std::result::Result<T, Response> {
        let agent = headers
            .get(UCP_AGENT)
            .and_then(|value| value.to_str().ok())
            .ok_or_else(|| NegotiationError::InvalidProfileUrl("请求没有 UCP-Agent 头".to_owned()))
            .and_then(parse_agent_header)
            .map_err(|e| negotiation_failure(&e))?;
        let active = self
            .negotiator
            .negotiate(&agent, CHECKOUT)
            .await
            .map_err(|e| negotiation_failure(&e))?;
        self.run(subject, move |shop| call(&shop.negotiated(active)))
            .await
            .map_err(|failure| shop_failure(&failure))
    }

    /// Runs `call` on the blocking pool with the shop acting for the
    /// request's user.
    async fn run<T: Send + 'static>(
        &self,
        subject: Option<Extension<Subject>>,
        call: impl FnOnce(&Shop) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let acting = self
            .callers
            .acting_for_request(subject.as_ref().map(|Extension(s)| s))?;
        let shop = self.shop.clone();
        tokio::task::spawn_blocking(move || call(&acting.shop(&shop)?))
            .await
            .map_err(|error| ShopError::Store(format!("请求未能完成：{error}")))?
    }
}

fn idempotency_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get(IDEMPOTENCY_KEY)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

fn written(outcome: std::result::Result<Written<Value>, Response>, status: StatusCode) -> Response {
    match outcome {
        Ok(written) => (status, Json(written.value)).into_response(),
        Err(refused) => refused,
    }
}

/// A body that is not JSON (400) or not of the request's shape (422).
fn bad_body(rejection: &JsonRejection) -> Response {
    let status = match rejection {
        JsonRejection::JsonDataError(_) => StatusCode::UNPROCESSABLE_ENTITY,
        JsonRejection::MissingJsonContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        _ => StatusCode::BAD_REQUEST,
    };
    error(status, "invalid_input", rejection.body_text())
}

/// The standard's error response for a failed negotiation.
fn negotiation_failure(failure: &NegotiationError) -> Response {
    let (code, status) = failure.code_and_status();
    respond(failure::error(status, code, failure.to_string()))
}

/// The standard's error response for a failed call.
fn shop_failure(failure: &ShopError) -> Response {
    respond(failure::of(failure))
}

/// A request that names no origin the shop could answer for.
fn no_host() -> Response {
    error(
        StatusCode::BAD_REQUEST,
        "invalid_input",
        "请求没有 Host".to_owned(),
    )
}

fn internal() -> Response {
    shop_failure(&ShopError::Store("请求未能完成".to_owned()))
}

fn error(status: StatusCode, code: &str, content: String) -> Response {
    respond(failure::error(status.as_u16(), code, content))
}

fn respond(failure: Failure) -> Response {
    let status = StatusCode::from_u16(failure.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(failure.body)).into_response()
}
