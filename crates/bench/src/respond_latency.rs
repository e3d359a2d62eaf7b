//! Part 2: from the user's approval to the call reaching the shop. A
//! session holds a history of 10, 1,000 or 10,000 messages; the model asks
//! to add an iPhone to the cart (a write, so a card stops the run); the
//! clock starts just before `Agent::respond` (approve) and stops when the
//! `tools/call` line arrives at the shop's stdin, as noted by the bench's
//! stdio proxy in front of the shop. The moment the agent's MCP client
//! starts the call is reported beside it.

use std::path::Path;
use std::time::{Duration, Instant};

use bitselect::params::{CartAction, UpdateCartItemParams};
use bitselect::{Shop, ShopError};
use ragent::protocol::{CallDecision, Decision, StopReason};
use serde_json::json;
use test_support::ScriptedModel;

use crate::BenchError;
use crate::harness::BenchAgent;
use crate::history_fill::fill_session;
use crate::proxy::{read_arrivals, unix_ns};
use crate::results::{Part, Row, load_row};
use crate::shop::{IPHONE, SHOP_SERVER, proxied_shop_entry};
use crate::stats::{ms, summarize};
use crate::turns::{call_turn, text_turn};

/// 10,000 messages may take at most this many times as long as 10.
const FLATNESS: f64 = 1.2;

pub struct Options {
    pub sizes: Vec<usize>,
    pub repeats: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sizes: vec![10, 1_000, 10_000],
            repeats: 50,
        }
    }
}

/// One approval, timed.
struct Sample {
    /// To the `tools/call` line arriving at the shop's stdin.
    to_server: Duration,
    /// To the agent's MCP client starting the call.
    to_client_call: Duration,
    /// `respond` returning (its synchronous part: checks and records).
    respond_returned: Duration,
}

async fn one_approval(
    bench: &mut BenchAgent,
    model: &ScriptedModel,
    history: usize,
    arrivals: &Path,
) -> Result<Sample, BenchError> {
    // Each approval adds one to the cart, which holds at most 99 of a SKU:
    // the line goes before each approval (not timed).
    empty_cart_line(&bench.data.join("shop"))?;
    let now = unix_ms();
    let session = fill_session(&bench.db_path(), history, now)?;
    model.rewind();
    bench
        .agent
        .send_message(&session, "把一台 iPhone 17 加入购物车")?;
    let (reason, card) = bench.until_stop(&session).await?;
    let card = match (reason, card) {
        (StopReason::AwaitingConfirmation { .. }, Some(card)) => card,
        (reason, _) => {
            return Err(BenchError::Run(format!(
                "expected a card, the run stopped with {reason:?}"
            )));
        }
    };
    let decisions: Vec<CallDecision> = card
        .calls
        .iter()
        .map(|c| CallDecision {
            call_id: c.call_id.clone(),
            decision: Decision::Approve,
        })
        .collect();
    let call_id = card
        .calls
        .first()
        .map(|c| c.call_id.clone())
        .ok_or_else(|| BenchError::Run("a card without calls".into()))?;
    bench.tools.take();

    let start_unix = unix_ns();
    let start = Instant::now();
    bench
        .agent
        .respond(&session, &card.reply_id, decisions)
        .await?;
    let respond_returned = start.elapsed();
    bench.until_stop(&session).await?;

    let arrived = read_arrivals(arrivals)?
        .into_iter()
        .find(|a| a.key.as_deref() == Some(call_id.as_str()))
        .ok_or_else(|| BenchError::Run(format!("call {call_id} never reached the shop")))?;
    let (calls, _) = bench.tools.take();
    let client = calls
        .iter()
        .find(|c| c.key.as_deref() == Some(call_id.as_str()))
        .ok_or_else(|| BenchError::Run(format!("call {call_id} was not sent")))?;
    bench.agent.delete_session(&session)?;
    Ok(Sample {
        to_server: Duration::from_nanos(
            u64::try_from(arrived.at_unix_ns.saturating_sub(start_unix)).unwrap_or(u64::MAX),
        ),
        to_client_call: client.started.saturating_duration_since(start),
        respond_returned,
    })
}

/// Takes the bench's SKU out of the shop's cart, through the shop's own
/// code on its database (the running server sees the change).
fn empty_cart_line(shop_dir: &Path) -> Result<(), BenchError> {
    let failed = |e: ShopError| BenchError::Setup(format!("emptying the cart line: {e}"));
    let shop = Shop::open(shop_dir).map_err(failed)?;
    let held = shop
        .query_cart()
        .map_err(failed)?
        .lines
        .iter()
        .any(|line| line.sku_code == IPHONE);
    if held {
        let remove = UpdateCartItemParams {
            sku_code: IPHONE.to_string(),
            action: CartAction::Remove,
            quantity: None,
        };
        shop.update_cart_item(&remove, None).map_err(failed)?;
    }
    Ok(())
}

fn unix_ms() -> i64 {
    i64::try_from(unix_ns() / 1_000_000).unwrap_or(i64::MAX)
}

pub async fn run(options: &Options) -> Result<Part, BenchError> {
    let turns = [
        call_turn(
            &format!("{SHOP_SERVER}__update_cart_item"),
            &json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
        ),
        text_turn("已加入购物车。"),
    ];
    let model = ScriptedModel::cycle(&tokio::runtime::Handle::current(), &turns)
        .map_err(|e| BenchError::Setup(e.to_string()))?;
    let mut rows = Vec::new();
    let mut medians = Vec::new();
    for &size in &options.sizes {
        let arrivals_dir =
            tempfile::tempdir().map_err(|e| BenchError::io(Path::new("temp dir"), e))?;
        let arrivals = arrivals_dir.path().join("arrivals.jsonl");
        let mut bench =
            BenchAgent::open(&model, 12, |dir| proxied_shop_entry(dir, &arrivals)).await?;
        // The first approval starts the shop: not measured.
        one_approval(&mut bench, &model, size, &arrivals).await?;
        let mut samples = Vec::new();
        for _ in 0..options.repeats {
            samples.push(one_approval(&mut bench, &model, size, &arrivals).await?);
        }
        bench.shutdown().await;
        let server = summarize(&samples.iter().map(|s| s.to_server).collect::<Vec<_>>());
        let client = summarize(&samples.iter().map(|s| s.to_client_call).collect::<Vec<_>>());
        let returned = summarize(
            &samples
                .iter()
                .map(|s| s.respond_returned)
                .collect::<Vec<_>>(),
        );
        medians.push((size, server.median));
        rows.push(Row::info(
            format!("{size} messages: approve to call at the shop's stdin"),
            server.median_p95(),
            format!(
                "{} approvals; arrival noted by a proxy in front of the shop (server side)",
                server.count
            ),
        ));
        rows.push(Row::info(
            format!("{size} messages: approve to the MCP client sending"),
            client.median_p95(),
            "client side: the agent's hub starting the call",
        ));
        rows.push(Row::info(
            format!("{size} messages: respond() returns"),
            returned.median_p95(),
            "checks and records the decision; the call runs on a task after",
        ));
    }
    let smallest = medians.iter().min_by_key(|(size, _)| *size);
    let largest = medians.iter().max_by_key(|(size, _)| *size);
    if let (Some(&(small, a)), Some(&(large, b))) = (smallest, largest)
        && small != large
    {
        let ratio = b.as_secs_f64() / a.as_secs_f64().max(1e-9);
        rows.push(Row::judged(
            format!("ratio of medians, {large} vs {small} messages"),
            format!("{ratio:.2}x ({} vs {})", ms(b), ms(a)),
            format!("<= {FLATNESS}x"),
            ratio <= FLATNESS,
            "approve to call at the shop's stdin",
        ));
    }
    rows.push(load_row());
    Ok(Part {
        part: "respond-latency".into(),
        title: "2. Approval to the call reaching the shop".into(),
        rows,
    })
}
