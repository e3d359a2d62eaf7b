//! Signing in to an HTTP server that asks for it, against the real
//! authorization server (oidc-provider) and the shop served over HTTP as
//! its protected resource: the run that needs it stops with "sign in",
//! the browser's part is played over HTTP, the run goes on after it; a
//! restart signs nobody in again; an expired access token is refreshed
//! without a browser; sign-out forgets the tokens; and each way a
//! sign-in can go wrong ends with its own error and nothing kept.

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use ragent::error::AgentError;
use ragent::mcp::SignInStatus;
use ragent::mcp::config::{ServerConfig, ServerTransport};
use ragent::mcp::sign_in::SignInError;
use ragent::protocol::{AgentEvent, InputAskKind, StopReason};
use ragent::settings::{Settings, ShopConnection};
use ragent::store::{Store, kv};
use ragent::toolcall::CallStatus;
use rmcp::transport::auth::StoredCredentials;
use serde_json::json;
use test_support::oauth::log_in;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::*;

const SERVER: &str = "online";
const SLOT: &str = "server/online/oauth";

impl OnlineShop {
    /// The app with its built-in shop moved online, to this one.
    fn as_the_shop(&self) -> Setup {
        Setup {
            shop: true,
            online_shop: Some("shop".into()),
            settings: Settings {
                shop: ShopConnection::Online {
                    url: self.resource.clone(),
                },
                ..Settings::default()
            },
            ..Setup::bare()
        }
    }

    fn setup(&self) -> Setup {
        let mut settings = Settings::default();
        settings.mcp_servers.insert(
            SERVER.into(),
            ServerConfig::untrusted(ServerTransport::Http {
                url: self.resource.clone(),
                headers: Default::default(),
            }),
        );
        Setup {
            settings,
            ..Setup::bare()
        }
    }
}

/// The sign-in's secret as the database keeps it (no keyring in tests).
fn stored(harness: &Harness) -> Option<StoredCredentials> {
    let store = Store::open(&harness.dir.path().join("agent.db")).unwrap();
    let text = store.with_conn(|c| kv::secret(c, SLOT)).unwrap()?;
    Some(serde_json::from_str(&text).unwrap())
}

/// Keeps `credentials` as the sign-in got for `resource`.
fn keep_for(harness: &Harness, credentials: &StoredCredentials, resource: &str) {
    let store = Store::open(&harness.dir.path().join("agent.db")).unwrap();
    let mut value = serde_json::to_value(credentials).unwrap();
    value["resource"] = resource.into();
    store
        .with_conn(|c| kv::set_secret(c, SLOT, &value.to_string(), 0))
        .unwrap();
}

/// A host that answers every GET 404 and anything else 401, naming no
/// metadata, and keeps what each request sent (head and the body so far).
async fn bare_host() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut data = Vec::new();
                let mut buf = [0u8; 4096];
                while !data.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => data.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&data).to_lowercase();
                let status = if text.starts_with("get ") {
                    "404 Not Found"
                } else {
                    "401 Unauthorized"
                };
                kept.lock().unwrap().push(text);
                let answer =
                    format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    (url, seen)
}

fn token_field(credentials: &StoredCredentials, field: &str) -> String {
    let value = serde_json::to_value(credentials.token_response.as_ref().unwrap()).unwrap();
    value[field].as_str().unwrap().to_string()
}

/// The online shop's tools the agent lists now.
async fn online_tools(harness: &Harness) -> Vec<String> {
    harness
        .agent
        .tool_policies()
        .await
        .into_iter()
        .map(|view| view.qualified_name)
        .filter(|name| name.starts_with("online__"))
        .collect()
}

async fn sign_in_status(harness: &Harness) -> Option<SignInStatus> {
    harness
        .agent
        .server_status()
        .await
        .into_iter()
        .find(|status| status.name == SERVER)
        .and_then(|status| status.sign_in)
}

/// Begins a sign-in, lets `login` through the authorization server's
/// pages, delivers the redirect to the app's loopback listener, and
/// answers with how the sign-in finished.
async fn sign_in_as(harness: &Harness, login: &str) -> Result<SignInStatus, AgentError> {
    sign_in_to(harness, SERVER, login).await
}

async fn sign_in_to(
    harness: &Harness,
    server: &'static str,
    login: &str,
) -> Result<SignInStatus, AgentError> {
    let started = harness.agent.begin_sign_in(server).await.unwrap();
    let agent = harness.agent.clone();
    let finish = tokio::spawn(async move { agent.finish_sign_in(server).await });
    let redirect = log_in(&started.authorization_url, login).await;
    reqwest::get(&redirect).await.unwrap();
    finish.await.unwrap()
}

/// The tools the model was offered in its `index`th request.
fn offered(h: &Harness, index: usize) -> Vec<String> {
    h.model.requests()[index]["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| tool["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Starts a run on `text` and follows it until it waits for the sign-in.
async fn say_until_sign_in_is_asked(h: &mut Harness, text: &str, server: &str) {
    h.agent.send_message(&h.session, text).unwrap();
    let server = server.to_string();
    h.events
        .wait_for(|event| match event {
            AgentEvent::SignInRequired {
                server: asked,
                run_waits: true,
            } if *asked == server => Some(()),
            _ => None,
        })
        .await;
}

#[tokio::test]
async fn a_run_waits_for_the_sign_in_and_goes_on_with_the_servers_tools() {
    let online = OnlineShop::start().await;
    let mut h = Harness::start(online.setup()).await;

    h.model.push_turn(text_turn("这些耳机有货。"));
    say_until_sign_in_is_asked(&mut h, "有什么耳机？", SERVER).await;
    assert_eq!(sign_in_status(&h).await, Some(SignInStatus::Required));
    assert!(h.model.requests().is_empty(), "the model waits too");

    let signed_in = sign_in_as(&h, "alice").await.unwrap();
    assert_eq!(
        signed_in,
        SignInStatus::SignedIn {
            identity: "alice".into()
        }
    );
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed, "{:?}", run.events);
    assert_eq!(
        run.events.first(),
        Some(&AgentEvent::SignInEnded {
            server: SERVER.into(),
            identity: Some("alice".into())
        })
    );
    assert!(
        offered(&h, 0).contains(&"online__search_product".to_string()),
        "{:?}",
        offered(&h, 0)
    );

    h.model.push_turn(text_turn("还有别的。"));
    let run = h.say("还有吗？").await;
    assert!(
        !run.events
            .iter()
            .any(|event| matches!(event, AgentEvent::SignInRequired { .. })),
        "signed in: nothing to tell"
    );
}

#[tokio::test]
async fn going_on_without_the_sign_in_answers_without_the_server_and_later_runs_do_not_wait() {
    let online = OnlineShop::start().await;
    let mut h = Harness::start(online.setup()).await;

    h.model.push_turn(text_turn("在线商店需要先登录。"));
    say_until_sign_in_is_asked(&mut h, "有什么耳机？", SERVER).await;
    h.agent.go_on_without(SERVER);
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(run.events.contains(&AgentEvent::SignInEnded {
        server: SERVER.into(),
        identity: None
    }));
    assert!(
        !offered(&h, 0)
            .iter()
            .any(|name| name.starts_with("online__")),
        "{:?}",
        offered(&h, 0)
    );

    // The next run only tells, and goes on at once.
    h.model.push_turn(text_turn("仍然没有登录。"));
    let run = h.say("现在呢？").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(run.events.contains(&AgentEvent::SignInRequired {
        server: SERVER.into(),
        run_waits: false
    }));

    // Signed in from settings later: its tools are back.
    sign_in_as(&h, "alice").await.unwrap();
    h.model.push_turn(text_turn("这些耳机有货。"));
    h.say("再看看").await;
    assert!(
        offered(&h, 2).contains(&"online__search_product".to_string()),
        "{:?}",
        offered(&h, 2)
    );
}

#[tokio::test]
async fn a_run_waiting_for_a_sign_in_can_be_stopped() {
    let online = OnlineShop::start().await;
    let mut h = Harness::start(online.setup()).await;
    say_until_sign_in_is_asked(&mut h, "有什么耳机？", SERVER).await;
    assert!(h.agent.cancel_run(&h.session).unwrap());
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Cancelled);
    assert!(h.model.requests().is_empty());
}

#[tokio::test]
async fn the_shop_moved_online_is_signed_in_to_and_keeps_the_built_in_shops_trust_and_cards() {
    let online = OnlineShop::start().await;
    let mut h = Harness::start(online.as_the_shop()).await;

    say_until_sign_in_is_asked(&mut h, "把两台 iPhone 加入购物车", "shop").await;
    h.model.push_turn(calls_turn(
        "将把 2 台 iPhone 加入购物车。",
        &[(
            "c1",
            "shop__update_cart_item",
            json!({"skuCode": IPHONE, "action": "add", "quantity": 2}),
        )],
    ));
    sign_in_to(&h, "shop", "dora").await.unwrap();
    let run = h.events.until_stop().await;
    assert!(run.asked(), "a write to the shop still stops on a card");
    let card = run.card().clone();
    h.model.push_turn(text_turn("已加入。"));
    let run = h.approve(&card).await;
    assert_eq!(run.finished()[0].status, CallStatus::Succeeded);

    h.model
        .push_turn(calls_turn("", &[("c2", "shop__query_cart", json!({}))]));
    h.model.push_turn(text_turn("购物车里有两台。"));
    let run = h.say("看看购物车").await;
    assert!(
        !run.asked(),
        "the shop's reads run freely, as the local shop's"
    );
    let cart = run.finished()[0].output.clone().unwrap();
    assert!(cart.contains(IPHONE), "{cart}");
    assert!(!h.shop_dir().exists(), "the local shop was never started");
    let status = h.agent.server_status().await;
    let shop = status.iter().find(|s| s.name == "shop").unwrap();
    assert_eq!(
        shop.sign_in,
        Some(SignInStatus::SignedIn {
            identity: "dora".into()
        })
    );
}

/// The online shop sends the user to its payment page, on its own
/// address: the page is shown, no origin needs declaring.
#[tokio::test]
async fn the_online_shop_s_payment_page_is_shown_on_its_own_address() {
    let online = OnlineShop::start().await;
    let mut h = Harness::start(online.as_the_shop()).await;

    say_until_sign_in_is_asked(&mut h, "把一台 iPhone 加入购物车", "shop").await;
    h.model.push_turn(calls_turn(
        "加入购物车。",
        &[(
            "c1",
            "shop__update_cart_item",
            json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
        )],
    ));
    sign_in_to(&h, "shop", "dora").await.unwrap();
    let card = h.events.until_stop().await.card().clone();
    h.model.push_turn(text_turn("已加入购物车。"));
    h.approve(&card).await;

    h.model.push_turn(calls_turn(
        "下单。",
        &[(
            "o1",
            "shop__create_order",
            json!({
                "items": [{"skuCode": IPHONE, "quantity": 1}],
                "receiverName": "朵拉",
                "receiverPhone": "13800000000",
                "receiverAddress": "上海市浦东新区世纪大道 1 号"
            }),
        )],
    ));
    let card = h.say("下单").await.card().clone();
    h.model.push_turn(text_turn("已下单。"));
    let run = h.approve(&card).await;
    let order = run
        .finished()
        .into_iter()
        .find(|call| call.tool == "create_order")
        .unwrap_or_else(|| panic!("no order in {:#?}", run.events));
    assert_eq!(order.status, CallStatus::Succeeded, "{order:?}");
    let output = order.output.unwrap();
    let order_no = output
        .strip_prefix("订单 ")
        .and_then(|rest| rest.split('｜').next())
        .unwrap_or_else(|| panic!("no order number in {output}"))
        .to_string();

    h.model.push_turn(calls_turn(
        "",
        &[("p1", "shop__pay_order", json!({"orderNo": order_no}))],
    ));
    let card = h.say("付款").await.card().clone();
    let run = h.approve(&card).await;
    let input = run
        .events
        .iter()
        .find_map(|e| match e {
            AgentEvent::InputRequested { card } => Some(card.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no payment page in {:#?}", run.events));
    let shop_origin = online
        .resource
        .strip_suffix(bitselect::MCP_PATH)
        .unwrap()
        .to_string();
    match &input.asks[0].kind {
        InputAskKind::Url { url, origin, .. } => {
            assert_eq!(origin, &shop_origin);
            assert!(url.starts_with(&format!("{shop_origin}/pay/")), "{url}");
        }
        other => panic!("the online shop pays on its page, not {other:?}"),
    }
}

#[tokio::test]
async fn tokens_outlive_a_restart_are_refreshed_without_a_browser_and_sign_out_forgets_them() {
    let online = OnlineShop::start().await;
    let mut h = Harness::start(online.setup()).await;
    assert_eq!(online_tools(&h).await, Vec::<String>::new());
    assert_eq!(sign_in_status(&h).await, Some(SignInStatus::Required));
    sign_in_as(&h, "bob").await.unwrap();
    assert!(
        online_tools(&h)
            .await
            .contains(&"online__query_cart".to_string())
    );

    let first = stored(&h).expect("the tokens are kept");
    assert_eq!(first.issuer.as_deref(), Some(online.auth.issuer.as_str()));
    let settings_page = serde_json::to_string(&h.agent.settings_view()).unwrap();
    assert!(!settings_page.contains(&token_field(&first, "access_token")));

    // A restart: no browser, the kept token is used.
    h.restart(online.setup()).await;
    assert!(
        online_tools(&h)
            .await
            .contains(&"online__query_cart".to_string())
    );
    assert_eq!(
        sign_in_status(&h).await,
        Some(SignInStatus::SignedIn {
            identity: "bob".into()
        })
    );
    assert_eq!(
        token_field(&stored(&h).unwrap(), "access_token"),
        token_field(&first, "access_token")
    );

    // Another data directory holding the same sign-in, whose access
    // token's life is over as far as the app can tell: the refresh token
    // gets a new one (and a new refresh token) by itself. (Not this one's:
    // its closing connection would spend the same refresh token.)
    let later = Harness::start(online.setup()).await;
    let mut expired = first.clone();
    expired.token_received_at = Some(1);
    keep_for(&later, &expired, &online.resource);
    assert!(
        online_tools(&later)
            .await
            .contains(&"online__query_cart".to_string())
    );
    let refreshed = stored(&later).unwrap();
    assert_ne!(
        token_field(&refreshed, "access_token"),
        token_field(&first, "access_token")
    );
    assert_ne!(
        token_field(&refreshed, "refresh_token"),
        token_field(&first, "refresh_token")
    );

    h.agent.sign_out(SERVER).await.unwrap();
    assert!(stored(&h).is_none(), "sign-out forgets the tokens");
    assert_eq!(online_tools(&h).await, Vec::<String>::new());
    assert_eq!(sign_in_status(&h).await, Some(SignInStatus::Required));
}

#[tokio::test]
async fn a_refused_refresh_token_forgets_the_sign_in_and_asks_for_a_new_one() {
    let online = OnlineShop::start().await;
    let mut h = Harness::start(online.setup()).await;
    sign_in_as(&h, "carol").await.unwrap();
    let mut spoiled = serde_json::to_value(stored(&h).unwrap()).unwrap();
    spoiled["token_received_at"] = 1.into();
    spoiled["token_response"]["refresh_token"] = "no-longer-valid".into();
    keep_for(
        &h,
        &serde_json::from_value(spoiled).unwrap(),
        &online.resource,
    );

    h.restart(online.setup()).await;
    assert_eq!(online_tools(&h).await, Vec::<String>::new());
    assert_eq!(sign_in_status(&h).await, Some(SignInStatus::Required));
    assert!(stored(&h).is_none(), "a refused refresh token is not kept");
    sign_in_as(&h, "carol").await.unwrap();
    assert!(
        online_tools(&h)
            .await
            .contains(&"online__query_cart".to_string())
    );
}

/// `redirect` with its `param` replaced by `value`.
fn changed(redirect: &str, param: &str, value: &str) -> String {
    let mut changed = reqwest::Url::parse(redirect).unwrap();
    let kept: Vec<(String, String)> = changed
        .query_pairs()
        .into_owned()
        .filter(|(name, _)| name != param)
        .collect();
    changed
        .query_pairs_mut()
        .clear()
        .extend_pairs(kept)
        .append_pair(param, value);
    changed.to_string()
}

/// Signs `login` in as [`sign_in_as`] does, but delivers the redirect with
/// its `param` replaced by `value`; answers with how the sign-in ended.
async fn sign_in_with_redirect_changed(
    harness: &Harness,
    login: &str,
    param: &str,
    value: &str,
) -> AgentError {
    let started = harness.agent.begin_sign_in(SERVER).await.unwrap();
    let agent = harness.agent.clone();
    let finish = tokio::spawn(async move { agent.finish_sign_in(SERVER).await });
    let redirect = log_in(&started.authorization_url, login).await;
    reqwest::get(changed(&redirect, param, value))
        .await
        .unwrap();
    finish.await.unwrap().unwrap_err()
}

#[tokio::test]
async fn a_redirect_with_another_state_is_answered_400_and_the_sign_in_waits_for_its_own() {
    let online = OnlineShop::start().await;
    let h = Harness::start(online.setup()).await;
    let started = h.agent.begin_sign_in(SERVER).await.unwrap();
    let agent = h.agent.clone();
    let finish = tokio::spawn(async move { agent.finish_sign_in(SERVER).await });
    let redirect = log_in(&started.authorization_url, "erin").await;

    for stray in [
        changed(&redirect, "state", "not-this-sign-in"),
        changed(&redirect, "state", ""),
    ] {
        let answer = reqwest::get(&stray).await.unwrap();
        assert_eq!(answer.status(), 400, "{stray}");
    }
    assert!(
        !finish.is_finished(),
        "the stray requests did not end the sign-in"
    );
    assert!(stored(&h).is_none(), "nothing was kept for them");

    let answer = reqwest::get(&redirect).await.unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(
        finish.await.unwrap().unwrap(),
        SignInStatus::SignedIn {
            identity: "erin".into()
        }
    );
    assert!(stored(&h).is_some());
}

#[tokio::test]
async fn a_code_the_token_endpoint_refuses_ends_the_sign_in_and_nothing_is_kept() {
    let online = OnlineShop::start().await;
    let h = Harness::start(online.setup()).await;
    let error = sign_in_with_redirect_changed(&h, "dave", "code", "a-code-nobody-issued").await;
    assert!(
        matches!(
            error,
            AgentError::SignIn {
                error: SignInError::TokenEndpoint(_),
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(error.info().code, ragent::protocol::ErrorCode::SignIn);
    assert!(stored(&h).is_none());
}

#[tokio::test]
async fn a_cancelled_sign_in_ends_with_its_own_code_and_keeps_nothing() {
    let online = OnlineShop::start().await;
    let h = Harness::start(online.setup()).await;
    h.agent.begin_sign_in(SERVER).await.unwrap();
    let agent = h.agent.clone();
    let finish = tokio::spawn(async move { agent.finish_sign_in(SERVER).await });
    // Cancelling before or after the wait began ends it the same way.
    assert!(h.agent.cancel_sign_in(SERVER));
    let error = finish.await.unwrap().unwrap_err();
    assert_eq!(
        error.info().code,
        ragent::protocol::ErrorCode::SignInCancelled,
        "{error:?}"
    );
    assert!(stored(&h).is_none());
}

#[tokio::test]
async fn tokens_belong_to_the_servers_address_and_go_nowhere_else() {
    let online = OnlineShop::start().await;
    let mut h = Harness::start(online.setup()).await;
    sign_in_as(&h, "frank").await.unwrap();
    let credentials = stored(&h).expect("the tokens are kept");
    let access = token_field(&credentials, "access_token");
    let refresh = token_field(&credentials, "refresh_token");

    // The server's URL changes to another host: its tokens are forgotten,
    // and the new host sees none of them.
    let (elsewhere, seen) = bare_host().await;
    let mut moved = online.setup();
    let Some(config) = moved.settings.mcp_servers.get_mut(SERVER) else {
        panic!("the server is configured");
    };
    config.transport = ServerTransport::Http {
        url: elsewhere.clone(),
        headers: Default::default(),
    };
    h.agent.save_settings(moved.settings.clone()).await.unwrap();
    assert_eq!(online_tools(&h).await, Vec::<String>::new());
    assert!(
        !matches!(
            sign_in_status(&h).await,
            Some(SignInStatus::SignedIn { .. })
        ),
        "not signed in at the new address"
    );
    assert!(
        stored(&h).is_none(),
        "the tokens for the old address are gone"
    );

    // Tokens kept for that host, which publishes no sign-in metadata: a
    // reconnect does not send them to endpoints guessed from its URL.
    keep_for(&h, &credentials, &elsewhere);
    h.restart(moved).await;
    assert_eq!(online_tools(&h).await, Vec::<String>::new());
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "the new host was asked");
    for request in &seen {
        assert!(!request.contains(&access.to_lowercase()), "{request}");
        assert!(!request.contains(&refresh.to_lowercase()), "{request}");
        assert!(!request.contains("authorization:"), "{request}");
    }
}

#[tokio::test]
async fn with_the_authorization_server_down_a_new_sign_in_fails_saying_so_and_keeps_nothing() {
    let mut online = OnlineShop::start().await;
    let h = Harness::start(online.setup()).await;
    online.auth.stop().await;
    let error = h.agent.begin_sign_in(SERVER).await.unwrap_err();
    assert_eq!(error.info().code, ragent::protocol::ErrorCode::SignIn);
    let said = error.to_string();
    assert!(
        said.contains(&online.auth.issuer),
        "the error names the authorization server that did not answer: {said}"
    );
    assert!(stored(&h).is_none());
}
