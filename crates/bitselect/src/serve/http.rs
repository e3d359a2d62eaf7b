//! The shop as a streamable HTTP service: the MCP endpoint (with sign-in,
//! or acting for the demo user), the commerce standard's REST and MCP
//! endpoints, the payment pages and the health check.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::{HttpAccess, MCP_PATH, ServeError};
use crate::auth::config::RESOURCE_METADATA_NAME;
use crate::auth::{AuthConfig, Authenticator, require_bearer};
use crate::callers::Callers;
use crate::origins::{AllowedOrigins, check_origin};
use crate::pay_page;
use crate::server::ShopServer;
use crate::shop::Shop;
use crate::ucp;

/// Where an HTTP service listens: an address to bind, or a listener bound
/// already. A caller that names the port in a URL before the service runs
/// (an OAuth resource URL does) binds port 0 and hands the listener over,
/// so no one else can take the port in between.
#[derive(Debug)]
pub enum Bind {
    Address(SocketAddr),
    Listener(std::net::TcpListener),
}

impl From<SocketAddr> for Bind {
    fn from(addr: SocketAddr) -> Self {
        Self::Address(addr)
    }
}

impl From<std::net::TcpListener> for Bind {
    fn from(listener: std::net::TcpListener) -> Self {
        Self::Listener(listener)
    }
}

/// The streamable HTTP MCP service, to mount in a router. With
/// [`Callers::PerRequest`] each call acts for the [`crate::Subject`] that a
/// layer in front of it put in the request's extensions: the hook an
/// authentication layer fills. `pay_order` keeps its form: the payment
/// pages are served by [`serve_http`] and [`serve_http_authenticated`].
pub fn http_service(
    shop: Shop,
    callers: Callers,
    config: StreamableHttpServerConfig,
) -> StreamableHttpService<ShopServer, LocalSessionManager> {
    online_service(shop, callers, None, config)
}

/// [`http_service`] whose `pay_order` sends a client that shows pages to
/// the payment pages at `pay_pages` (an origin).
fn online_service(
    shop: Shop,
    callers: Callers,
    pay_pages: Option<String>,
    config: StreamableHttpServerConfig,
) -> StreamableHttpService<ShopServer, LocalSessionManager> {
    let server = ShopServer::with_callers(shop, callers);
    let server = match &pay_pages {
        Some(origin) => server.with_payment_pages(origin),
        None => server,
    };
    // Stateless: every request gets its own clone, which shares the routes.
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// `router` (the MCP endpoint) behind the `Origin` check, which runs
/// before any layer inside it.
fn origin_checked(router: axum::Router, origins: AllowedOrigins) -> axum::Router {
    router.layer(axum::middleware::from_fn_with_state(
        Arc::new(origins),
        check_origin,
    ))
}

/// The path of the health check, served without authentication.
pub const HEALTH_PATH: &str = "/healthz";

/// Serves streamable HTTP at `http://<addr>/mcp` until `shutdown` fires,
/// every call acting for the shop's caller (the demo user), with no sign-in:
/// a warning says so. `on_ready` is told the bound address (useful with port
/// 0) once the listener accepts connections. Non-loopback addresses need
/// `allow_remote`.
pub async fn serve_http(
    shop: Shop,
    addr: impl Into<Bind>,
    access: HttpAccess,
    shutdown: CancellationToken,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let HttpAccess {
        allow_remote,
        allowed_origins,
    } = access;
    let listener = listen(addr.into(), allow_remote).await?;
    tracing::warn!(
        "serving HTTP without authentication: every request acts for the demo user; \
         pass --auth-issuer and --resource-url to require sign-in"
    );
    // No request chooses its user without an authentication layer.
    let callers = Callers::Fixed(shop.caller().clone());
    let stop = CancellationToken::new();
    // The pages are where the listener is, unless that is every address.
    let bound = listener.local_addr().map_err(ServeError::Http)?;
    let pay_pages = (!bound.ip().is_unspecified()).then(|| format!("http://{bound}"));
    let pages = pay_page::routes(shop.clone());
    let (checkout, profile) = ucp::rest::routes(shop.clone(), callers.clone(), pay_pages.clone());
    let ucp_mcp = ucp::mcp::service(
        shop.clone(),
        callers.clone(),
        pay_pages.clone(),
        mcp_config(allow_remote, &stop),
    );
    tokio::spawn(ucp::webhook_sender::send_until(shop.clone(), stop.clone()));
    let mcp = online_service(
        shop.clone(),
        callers,
        pay_pages,
        mcp_config(allow_remote, &stop),
    );
    let mcp = axum::Router::new()
        .nest_service(MCP_PATH, mcp)
        .nest_service(ucp::names::UCP_MCP_PATH, ucp_mcp)
        .merge(checkout);
    let router = origin_checked(mcp, allowed_origins)
        .merge(pages)
        .merge(profile);
    let router = with_health(router, shop);
    run(listener, router, shutdown, stop, on_ready).await
}

/// Serves streamable HTTP at `http://<addr>/mcp` as an OAuth protected
/// resource: each call acts for the user its bearer token names (created on
/// first sight); a request without a valid token gets 401. The resource
/// metadata is served at [`AuthConfig::metadata_path`] (and at the root
/// well-known path), the health check at [`HEALTH_PATH`].
pub async fn serve_http_authenticated(
    shop: Shop,
    addr: impl Into<Bind>,
    access: HttpAccess,
    auth: AuthConfig,
    shutdown: CancellationToken,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let HttpAccess {
        allow_remote,
        allowed_origins,
    } = access;
    let listener = listen(addr.into(), allow_remote).await?;
    // The commerce service is a protected resource of its own, as the MCP
    // authorization spec wants of each endpoint: a client signing in to it
    // finds its own metadata; a token for either is good for both.
    let auth = Arc::new(Authenticator::new(
        auth.also_serving(ucp::names::UCP_MCP_PATH),
    ));
    let ucp_resource = format!("{}{}", auth.config().origin(), ucp::names::UCP_MCP_PATH);
    let ucp_auth = Arc::new(auth.for_resource(&ucp_resource).ok_or_else(|| {
        ServeError::Http(std::io::Error::other(
            "the commerce service's resource is not one of the shop's",
        ))
    })?);
    tracing::info!(
        issuer = auth.config().issuer(),
        resource = auth.config().resource(),
        commerce_resource = ucp_resource,
        "serving HTTP as an OAuth protected resource"
    );
    let warm = auth.clone();
    tokio::spawn(async move {
        if let Err(error) = warm.validator().keys().warm_up().await {
            tracing::warn!(%error, "the authorization server's keys could not be fetched yet; trying again on the first request");
        }
    });
    let stop = CancellationToken::new();
    // The pages are at the public origin clients reach the shop by; a
    // browser opens them without a token, so they are outside the guard.
    let pay_pages = Some(auth.config().origin());
    let pages = pay_page::routes(shop.clone());
    // The checkout's REST binding is the same protected resource as the
    // MCP endpoint, behind the same guard; the profile is discovery, open.
    let (checkout, profile) =
        ucp::rest::routes(shop.clone(), Callers::PerRequest, pay_pages.clone());
    let ucp_mcp = ucp::mcp::service(
        shop.clone(),
        Callers::PerRequest,
        pay_pages.clone(),
        mcp_config(allow_remote, &stop),
    );
    tokio::spawn(ucp::webhook_sender::send_until(shop.clone(), stop.clone()));
    let mcp = online_service(
        shop.clone(),
        Callers::PerRequest,
        pay_pages,
        mcp_config(allow_remote, &stop),
    );
    let ucp_mcp = axum::Router::new()
        .nest_service(ucp::names::UCP_MCP_PATH, ucp_mcp)
        .layer(axum::middleware::from_fn_with_state(
            ucp_auth.clone(),
            require_bearer,
        ));
    let mcp = axum::Router::new()
        .nest_service(MCP_PATH, mcp)
        .merge(checkout)
        .layer(axum::middleware::from_fn_with_state(
            auth.clone(),
            require_bearer,
        ))
        .merge(ucp_mcp);
    let guarded = origin_checked(mcp, allowed_origins)
        .merge(pages)
        .merge(profile);
    let metadata = {
        let auth = auth.clone();
        axum::routing::get(move || async move { auth.metadata_response() })
    };
    let root_path = format!("/.well-known/{RESOURCE_METADATA_NAME}");
    let ucp_metadata = {
        let auth = ucp_auth.clone();
        axum::routing::get(move || async move { auth.metadata_response() })
    };
    let mut router = guarded
        .route(&auth.config().metadata_path(), metadata.clone())
        .route(&ucp_auth.config().metadata_path(), ucp_metadata);
    if auth.config().metadata_path() != root_path {
        router = router.route(&root_path, metadata);
    }
    let router = with_health(router, shop);
    run(listener, router, shutdown, stop, on_ready).await
}

async fn listen(bind: Bind, allow_remote: bool) -> Result<TcpListener, ServeError> {
    let addr = match &bind {
        Bind::Address(addr) => *addr,
        Bind::Listener(listener) => listener.local_addr().map_err(ServeError::Http)?,
    };
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(ServeError::RemoteNotAllowed(addr));
    }
    let bound = match bind {
        Bind::Address(addr) => TcpListener::bind(addr).await,
        Bind::Listener(listener) => listener
            .set_nonblocking(true)
            .and_then(|()| TcpListener::from_std(listener)),
    };
    bound.map_err(|source| ServeError::Bind { addr, source })
}

/// Stateless streamable HTTP: no session lives in an instance between
/// requests, so any instance behind a load balancer serves any request,
/// and each call is answered with one JSON body. `stop` ends the service
/// once the HTTP server has finished the calls in flight.
fn mcp_config(allow_remote: bool, stop: &CancellationToken) -> StreamableHttpServerConfig {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_cancellation_token(stop.clone());
    if allow_remote {
        // The Host check guards a loopback server against DNS rebinding; a
        // server deliberately opened to the network is reached by other names.
        return config.disable_allowed_hosts();
    }
    config
}

/// The health check: the process serves requests, and has not had to shed
/// one a moment ago (503 `overloaded`: its database is too slow for the
/// calls coming in, so a balancer sends them elsewhere until it is not).
/// It says nothing of a database or authorization server that is merely
/// down, so a load balancer does not take every instance out for a hiccup.
fn with_health(router: axum::Router, shop: Shop) -> axum::Router {
    router.route(
        HEALTH_PATH,
        axum::routing::get(move || async move {
            if shop.overloaded() {
                (axum::http::StatusCode::SERVICE_UNAVAILABLE, "overloaded")
            } else {
                (axum::http::StatusCode::OK, "ok")
            }
        }),
    )
}

/// Serves until `shutdown`, then stops accepting, finishes the requests in
/// flight (a call that started is answered) and only then stops the MCP
/// service (`stop`).
async fn run(
    listener: TcpListener,
    router: axum::Router,
    shutdown: CancellationToken,
    stop: CancellationToken,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let bound = listener.local_addr().map_err(ServeError::Http)?;
    on_ready(bound);
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
        .map_err(ServeError::Http);
    stop.cancel();
    served
}
