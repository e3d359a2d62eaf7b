//! Part 1: the agent's own cost per tool round. A round is one model turn
//! that asks for a read plus that call: from the fake model having read
//! request n to it having read request n+1. In that span are the model's
//! time (its server's, request read to response written), the tool's time
//! (the call as the client sees it, sent to result back) and the rest,
//! which is the agent's own work: reading the stream, storing, judging,
//! listing tools, building the next request.

use std::time::Duration;

use serde_json::json;
use test_support::{Received, ScriptedModel};

use crate::BenchError;
use crate::harness::BenchAgent;
use crate::results::{Part, Row, load_row};
use crate::shop::{IPHONE, SHOP_SERVER, shop_entry};
use crate::stats::{Summary, ms, remainder, summarize};
use crate::timed_tools::Timed;
use crate::turns::{call_turn, text_turn};

/// The agent's own cost per round must stay at or under this.
const TARGET: Duration = Duration::from_millis(1);
/// Longest the model may take to have answered a run's requests (a guard,
/// not a pause).
const MODEL_GUARD: Duration = Duration::from_secs(10);

pub struct Options {
    /// Fresh sessions, each one run of `rounds` rounds.
    pub sessions: usize,
    /// Rounds per run: the model asks for this many reads, then answers.
    pub rounds: usize,
    /// Runs of `rounds` rounds in one growing session.
    pub long_runs: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sessions: 100,
            rounds: 10,
            long_runs: 100,
        }
    }
}

/// One round, split up.
#[derive(Debug, Clone, Copy)]
struct Round {
    wall: Duration,
    model: Duration,
    tool: Duration,
    listing: Duration,
}

impl Round {
    fn own(&self) -> Duration {
        remainder(self.wall, &[self.model, self.tool])
    }
}

/// The rounds of one run: `rounds + 1` model requests and `rounds` calls;
/// a tool listing counts in the round during which it started.
fn split(
    served: &[Received],
    calls: &[Timed],
    listings: &[Timed],
) -> Result<Vec<Round>, BenchError> {
    if served.len() != calls.len() + 1 {
        return Err(BenchError::Run(format!(
            "a run made {} model requests and {} calls",
            served.len(),
            calls.len()
        )));
    }
    Ok((0..calls.len())
        .map(|i| {
            let (from, to) = (served[i].read_at, served[i + 1].read_at);
            Round {
                wall: to.duration_since(from),
                model: served[i].server_time.unwrap_or_default(),
                tool: calls[i].took,
                listing: listings
                    .iter()
                    .filter(|l| l.started >= from && l.started < to)
                    .map(|l| l.took)
                    .sum(),
            }
        })
        .collect())
}

/// Runs one message through the agent and returns its rounds.
async fn one_run(
    bench: &mut BenchAgent,
    model: &ScriptedModel,
    session_id: &str,
) -> Result<Vec<Round>, BenchError> {
    model.rewind();
    model.take_received();
    bench.tools.take();
    bench
        .agent
        .send_message(session_id, "帮我看看 iPhone 17 的价格和库存")?;
    let (reason, _) = bench.until_stop(session_id).await?;
    if reason != ragent::protocol::StopReason::Completed {
        return Err(BenchError::Run(format!("a run stopped with {reason:?}")));
    }
    let (calls, listings) = bench.tools.take();
    // A request for each call's result, and the first.
    let served = model
        .take_answered(calls.len() + 1, MODEL_GUARD)
        .await
        .map_err(|e| BenchError::Run(e.to_string()))?;
    split(&served, &calls, &listings)
}

struct Figures {
    wall: Summary,
    model: Summary,
    tool: Summary,
    listing: Summary,
    own: Summary,
    wall_less_model: Summary,
}

fn figures(rounds: &[Round]) -> Figures {
    let pick = |f: fn(&Round) -> Duration| summarize(&rounds.iter().map(f).collect::<Vec<_>>());
    Figures {
        wall: pick(|r| r.wall),
        model: pick(|r| r.model),
        tool: pick(|r| r.tool),
        listing: pick(|r| r.listing),
        own: pick(Round::own),
        wall_less_model: pick(|r| remainder(r.wall, &[r.model])),
    }
}

fn rows_for(label: &str, f: &Figures, notes: &str) -> Vec<Row> {
    vec![
        Row::judged(
            format!("{label}: overhead per round, wall - model (the issue's definition)"),
            f.wall_less_model.median_p95(),
            "median <= 1 ms",
            f.wall_less_model.median <= TARGET,
            format!(
                "{} rounds; {notes}; includes the real shop's read over stdio",
                f.wall_less_model.count
            ),
        ),
        Row::judged(
            format!("{label}: agent's own cost per round (wall - model - tool)"),
            f.own.median_p95(),
            "median <= 1 ms",
            f.own.median <= TARGET,
            "the same rounds without the shop's time: what the agent itself spends",
        ),
        Row::judged(
            format!("{label}: agent's own cost against the MCP call it makes"),
            format!(
                "{:.2}x ({} vs {})",
                f.own.median.as_secs_f64() / f.tool.median.as_secs_f64().max(1e-9),
                ms(f.own.median),
                ms(f.tool.median)
            ),
            "<= 1x",
            f.own.median <= f.tool.median,
            "medians; a round of trusted reads should cost the agent no more than the read itself",
        ),
        Row::info(
            format!("{label}: wall per round"),
            f.wall.median_p95(),
            "model request n read to model request n+1 read, on the fake model's clock",
        ),
        Row::info(
            format!("{label}: model (fake server) per round"),
            f.model.median_p95(),
            "the fake model's own time: request read to response written",
        ),
        Row::info(
            format!("{label}: tool call per round (client side)"),
            f.tool.median_p95(),
            "the shop's read over stdio, sent to result back, as the agent's MCP client sees it",
        ),
        Row::info(
            format!("{label}: of the agent's own, tool listing"),
            f.listing.median_p95(),
            "tools/list round trips to the shop that fell within the round",
        ),
    ]
}

pub async fn run(options: &Options) -> Result<Part, BenchError> {
    let mut turns = vec![
        call_turn(
            &format!("{SHOP_SERVER}__search_product"),
            &json!({"skuCodes": [IPHONE]}),
        );
        options.rounds
    ];
    turns.push(text_turn("iPhone 17 256GB 黑色有货。"));
    let model = ScriptedModel::cycle(&tokio::runtime::Handle::current(), &turns)
        .map_err(|e| BenchError::Setup(e.to_string()))?;
    let max_turns = u32::try_from(options.rounds + 2).unwrap_or(u32::MAX);
    let mut bench = BenchAgent::open(&model, max_turns, shop_entry).await?;

    // A first run starts the shop and pins its tools: not measured.
    let warm = bench.agent.create_session(None)?.id;
    one_run(&mut bench, &model, &warm).await?;

    let mut fresh = Vec::new();
    for _ in 0..options.sessions {
        let session = bench.agent.create_session(None)?.id;
        fresh.extend(one_run(&mut bench, &model, &session).await?);
    }

    let long = bench.agent.create_session(None)?.id;
    let mut growing = Vec::new();
    for _ in 0..options.long_runs {
        growing.extend(one_run(&mut bench, &model, &long).await?);
    }
    bench.shutdown().await;

    let mut rows = Vec::new();
    rows.extend(rows_for(
        "fresh sessions",
        &figures(&fresh),
        &format!("{} sessions of {} rounds", options.sessions, options.rounds),
    ));
    if !growing.is_empty() {
        let f = figures(&growing);
        let messages = options.long_runs * (2 * options.rounds + 2);
        rows.extend(rows_for(
            "one growing session",
            &f,
            &format!(
                "{} runs of {} rounds in one session, history growing to {messages} messages",
                options.long_runs, options.rounds
            ),
        ));
        let tenth = (growing.len() / 10).max(1);
        let first = figures(&growing[..tenth]).own;
        let last = figures(&growing[growing.len() - tenth..]).own;
        let ratio = last.median.as_secs_f64() / first.median.as_secs_f64().max(1e-9);
        rows.push(Row::info(
            "one growing session: agent's own cost, first tenth vs last tenth",
            format!("{} -> {} ({ratio:.2}x)", ms(first.median), ms(last.median)),
            "medians; a ratio near 1 means the cost per round does not grow with the history",
        ));
    }
    rows.push(load_row());
    Ok(Part {
        part: "agent-rounds".into(),
        title: "1. Agent overhead per tool round".into(),
        rows,
    })
}
