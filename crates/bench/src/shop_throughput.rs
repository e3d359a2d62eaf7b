//! Part 3: the shop over stdio, called by an MCP client as the agent calls
//! it (the real `bitselect-mcp` binary as a child process): read calls per
//! second, one caller and several, and orders placed per second.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, MetaObject, RequestMetaObject};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Map, Value, json};

use crate::BenchError;
use crate::results::{Part, Row, load_row};
use crate::shop::{IPHONE, shop_binary};
use crate::stats::{Summary, summarize};

pub struct Options {
    pub reads: usize,
    pub callers: usize,
    pub orders: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            reads: 2_000,
            callers: 4,
            orders: 500,
        }
    }
}

fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Calls `tool` and fails on a tool error: a refused call is no throughput.
async fn call(
    peer: &Peer<RoleClient>,
    tool: &str,
    args: &Value,
    key: Option<String>,
) -> Result<Duration, BenchError> {
    let mut params =
        CallToolRequestParams::new(tool.to_string()).with_arguments(arguments(args.clone()));
    if let Some(key) = key {
        let mut meta = Map::new();
        meta.insert(ragent::mcp::IDEMPOTENCY_KEY.to_string(), Value::String(key));
        params.meta = Some(RequestMetaObject(MetaObject(meta)));
    }
    let started = Instant::now();
    let result = peer
        .call_tool(params)
        .await
        .map_err(|e| BenchError::Run(format!("{tool}: {e}")))?;
    let took = started.elapsed();
    if result.is_error == Some(true) {
        return Err(BenchError::Run(format!(
            "{tool} refused: {:?}",
            result.content
        )));
    }
    Ok(took)
}

/// The model codes of the page a search answers.
async fn page_codes(peer: &Peer<RoleClient>, args: &Value) -> Result<Vec<String>, BenchError> {
    let params =
        CallToolRequestParams::new("search_product").with_arguments(arguments(args.clone()));
    let result = peer
        .call_tool(params)
        .await
        .map_err(|e| BenchError::Run(format!("search_product: {e}")))?;
    let items = result
        .structured_content
        .as_ref()
        .and_then(|s| s.get("items"))
        .and_then(Value::as_array)
        .ok_or_else(|| BenchError::Run("search_product answered no items".to_owned()))?;
    Ok(items
        .iter()
        .filter_map(|item| {
            item.get("spuCode")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect())
}

/// `count` sequential calls; returns their latencies and the wall time.
async fn sequential(
    peer: &Peer<RoleClient>,
    tool: &str,
    args: &Value,
    count: usize,
) -> Result<(Summary, Duration), BenchError> {
    let started = Instant::now();
    let mut samples = Vec::with_capacity(count);
    for _ in 0..count {
        samples.push(call(peer, tool, args, None).await?);
    }
    Ok((summarize(&samples), started.elapsed()))
}

fn per_second(count: usize, wall: Duration) -> f64 {
    count as f64 / wall.as_secs_f64().max(1e-9)
}

/// Gives the SKU enough stock for every order of the run, so that what is
/// timed is placing orders, not refusals.
fn restock(data_dir: &Path, stock: usize) -> Result<(), BenchError> {
    let shop = bitselect::Shop::open(data_dir).map_err(|e| BenchError::Setup(e.to_string()))?;
    let conn = shop
        .connection()
        .map_err(|e| BenchError::Setup(e.to_string()))?;
    conn.execute(
        "UPDATE sku SET stock = ?1 WHERE sku_code = ?2",
        rusqlite::params![i64::try_from(stock).unwrap_or(i64::MAX), IPHONE],
    )?;
    Ok(())
}

pub async fn run(options: &Options) -> Result<Part, BenchError> {
    let dir = tempfile::tempdir().map_err(|e| BenchError::io(Path::new("temp dir"), e))?;
    let data_dir = dir.path().join("shop");
    // Opening it once seeds the database, so the restock has a row to change.
    restock(&data_dir, options.orders * 2 + 100)?;

    let mut command = tokio::process::Command::new(shop_binary()?);
    command
        .arg("--data-dir")
        .arg(&data_dir)
        .env("RUST_LOG", "warn");
    let (transport, _) = ragent::mcp::stdio::ChildProcess::spawn(command, Stdio::inherit())
        .map_err(|e| BenchError::Setup(format!("starting the shop: {e}")))?;
    let client = ragent::mcp::client::HubClient::new()
        .serve(transport)
        .await
        .map_err(|e| BenchError::Setup(format!("connecting to the shop: {e}")))?;
    let peer = client.peer().clone();

    let search = json!({"skuCodes": [IPHONE]});
    let keyword = json!({"keyword": "iPhone 17", "limit": 10});
    let cart = json!({});
    // Warm the shop's caches and the pipe.
    sequential(&peer, "search_product", &search, 50).await?;
    // The same answer as the keyword's, asked by its models' codes: what
    // the keyword costs beyond carrying a page of ten models.
    let page =
        json!({"spuCodes": page_codes(&peer, &keyword).await?, "limit": 10, "sort": "relevance"});

    let mut rows = Vec::new();
    for (label, tool, args) in [
        ("search_product by SKU code", "search_product", &search),
        ("search_product by keyword", "search_product", &keyword),
        (
            "search_product by the keyword's page of model codes",
            "search_product",
            &page,
        ),
        ("query_cart", "query_cart", &cart),
    ] {
        let (latency, wall) = sequential(&peer, tool, args, options.reads).await?;
        rows.push(Row::info(
            format!("{label}: calls/s, one caller"),
            format!("{:.0}", per_second(options.reads, wall)),
            format!(
                "{} sequential calls; latency {}",
                options.reads,
                latency.median_p95()
            ),
        ));
    }

    let callers = options.callers.max(1);
    let each = options.reads / callers;
    let started = Instant::now();
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let peer = peer.clone();
            let search = search.clone();
            tokio::spawn(async move { sequential(&peer, "search_product", &search, each).await })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        let (latency, _) = task
            .await
            .map_err(|e| BenchError::Run(format!("a caller panicked: {e}")))??;
        latencies.push(latency);
    }
    let wall = started.elapsed();
    let worst_p95 = latencies.iter().map(|l| l.p95).max().unwrap_or_default();
    rows.push(Row::info(
        format!("search_product by SKU code: calls/s, {callers} callers"),
        format!("{:.0}", per_second(each * callers, wall)),
        format!(
            "{} calls on one connection; worst caller p95 {}",
            each * callers,
            crate::stats::ms(worst_p95)
        ),
    ));

    let mut adds = Vec::new();
    let mut orders = Vec::new();
    let started = Instant::now();
    for n in 0..options.orders {
        let add = json!({"skuCode": IPHONE, "action": "add", "quantity": 1});
        adds.push(call(&peer, "update_cart_item", &add, Some(format!("add-{n}"))).await?);
        let order = json!({"items": [{"skuCode": IPHONE, "quantity": 1}]});
        orders.push(call(&peer, "create_order", &order, Some(format!("order-{n}"))).await?);
    }
    let wall = started.elapsed();
    let order_time: Duration = orders.iter().sum();
    let orders = summarize(&orders);
    let adds = summarize(&adds);
    rows.push(Row::info(
        "create_order: orders/s, one caller",
        format!("{:.0}", per_second(options.orders, order_time)),
        format!(
            "{} orders of one line, each after adding it to the cart; time in create_order only, latency {}",
            options.orders,
            orders.median_p95()
        ),
    ));
    rows.push(Row::info(
        "add to cart + create_order: pairs/s",
        format!("{:.0}", per_second(options.orders, wall)),
        format!("update_cart_item latency {}", adds.median_p95()),
    ));
    client
        .cancel()
        .await
        .map_err(|e| BenchError::Run(format!("closing the shop: {e}")))?;
    rows.push(load_row());
    Ok(Part {
        part: "shop-throughput".into(),
        title: "3. Shop calls over stdio".into(),
        rows,
    })
}
