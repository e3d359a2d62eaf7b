//! A shopper who keeps their word: orders one iPhone 17 from the cart and,
//! when the answer is lost or the shop says to try again later, sends the
//! same order again with the same idempotency key until it is answered.

use std::net::SocketAddr;
use std::time::Duration;

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

use super::IPHONE_17;
use super::client::{request, text};

/// How many times a shopper sends their order in all before giving up.
const ATTEMPTS: usize = 100;

/// The pause before sending again: the shop asked for a moment, or was
/// out of reach.
const PAUSE: Duration = Duration::from_millis(50);

/// What became of one shopper's order.
#[derive(Debug)]
pub enum Outcome {
    Placed {
        order_no: String,
        attempts: usize,
    },
    Refused {
        code: String,
        message: String,
        attempts: usize,
    },
}

/// [`order_until_answered_saying_why`], without the reasons.
pub async fn order_until_answered(shop: SocketAddr, token: &str, key: &str) -> Outcome {
    order_until_answered_saying_why(shop, token, key).await.0
}

/// Orders one iPhone 17 from the cart at `shop`, sending the same
/// idempotency key again (on a new connection) whenever the answer is lost
/// or is `UNAVAILABLE`. Also returns why each attempt had to be repeated.
pub async fn order_until_answered_saying_why(
    shop: SocketAddr,
    token: &str,
    key: &str,
) -> (Outcome, Vec<String>) {
    let mut repeated_for = Vec::new();
    for attempt in 1..=ATTEMPTS {
        if attempt > 1 {
            tokio::time::sleep(PAUSE).await;
        }
        let connecting = rmcp::ServiceExt::serve((), {
            let config = StreamableHttpClientTransportConfig::with_uri(format!(
                "http://{shop}{}",
                bitselect::MCP_PATH
            ))
            .auth_header(token.to_owned());
            StreamableHttpClientTransport::from_config(config)
        });
        let client = match tokio::time::timeout(Duration::from_secs(10), connecting).await {
            Ok(Ok(client)) => client,
            Ok(Err(error)) => {
                repeated_for.push(format!("connecting: {error}"));
                continue;
            }
            Err(_) => {
                repeated_for.push("connecting timed out".into());
                continue;
            }
        };
        let mut params = request(
            "create_order",
            json!({
                "items": [{"skuCode": IPHONE_17, "quantity": 1}],
                "receiverName": "王芳",
                "receiverPhone": "13900139000",
                "receiverAddress": "上海市浦东新区世纪大道 100 号"
            }),
        );
        let mut meta = rmcp::model::RequestMetaObject::new();
        meta.insert("ragent/idempotency_key".to_owned(), json!(key));
        params.meta = Some(meta);
        match tokio::time::timeout(Duration::from_secs(20), client.call_tool(params)).await {
            Ok(Ok(result)) if result.is_error == Some(true) => {
                let code = result
                    .structured_content
                    .as_ref()
                    .expect("structured error")["error"]["code"]
                    .as_str()
                    .expect("error code")
                    .to_owned();
                if code == "UNAVAILABLE" {
                    repeated_for.push(format!("UNAVAILABLE: {}", text(&result)));
                    continue;
                }
                let outcome = Outcome::Refused {
                    code,
                    message: text(&result),
                    attempts: attempt,
                };
                return (outcome, repeated_for);
            }
            Ok(Ok(result)) => {
                let order_no = result
                    .structured_content
                    .as_ref()
                    .expect("structured order")["orderNo"]
                    .as_str()
                    .expect("orderNo")
                    .to_owned();
                let outcome = Outcome::Placed {
                    order_no,
                    attempts: attempt,
                };
                return (outcome, repeated_for);
            }
            Ok(Err(error)) => repeated_for.push(format!("the answer was lost: {error}")),
            Err(_) => repeated_for.push("the call timed out".into()),
        }
    }
    panic!("shopper with key {key} got no answer in {ATTEMPTS} attempts: {repeated_for:?}");
}
