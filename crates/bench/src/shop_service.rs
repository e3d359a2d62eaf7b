//! Part 6: the shop as a service. The real stack on this machine: a private
//! PostgreSQL cluster, the authorization server, 1 and then 3 release
//! `bitselect-mcp --http` instances on one database and HAProxy in front.
//! Demo shoppers made by the shop's own `seed-users` sign in, each with
//! their own token and MCP client, and make read calls through the
//! balancer at several concurrencies. Beside it, keyword search before and
//! after the store's text index on both stores, and what each instance
//! costs in CPU and memory.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use futures::StreamExt;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value, json};
use test_support::balancer::Balancer;
use test_support::oauth::AuthServer;
use test_support::ports::HeldPort;
use test_support::postgres::Database;
use test_support::shop_process::{Instance, start_instance};

use crate::BenchError;
use crate::keyword_search;
use crate::process_cost::{self, Memory, mib};
use crate::results::{Part, Row, load_row};
use crate::shop::{IPHONE, shop_binary};
use crate::stats::{Summary, ms, summarize};

const MCP_PATH: &str = bitselect::MCP_PATH;
/// Sign-ins in flight at once: the authorization server is one Node process.
const SIGN_INS_AT_ONCE: usize = 8;
/// Calls each shopper makes of each tool before anything is timed.
const WARM_UP_CALLS: usize = 3;
/// Access tokens outlive the run.
const TOKEN_TTL_SECS: u32 = 3600;

pub struct Options {
    /// Demo shoppers signed in; at least the largest concurrency.
    pub shoppers: usize,
    /// Calls per measurement (one tool, one concurrency, one instance count).
    pub calls: usize,
    pub concurrency: Vec<usize>,
    pub instances: Vec<usize>,
    /// Searches per keyword and way in the before/after comparison.
    pub search_repeats: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            shoppers: 64,
            calls: 1_000,
            concurrency: vec![1, 16, 64],
            instances: vec![1, 3],
            search_repeats: 200,
        }
    }
}

type Client = RunningService<RoleClient, ()>;

/// The read calls measured.
struct Read {
    label: &'static str,
    tool: &'static str,
    arguments: Value,
}

fn reads() -> Vec<Read> {
    vec![
        Read {
            label: "search_product by keyword",
            tool: "search_product",
            arguments: json!({"keyword": "iPhone 17", "limit": 10}),
        },
        Read {
            label: "search_product by SKU code",
            tool: "search_product",
            arguments: json!({"skuCodes": [IPHONE]}),
        },
        Read {
            label: "query_cart",
            tool: "query_cart",
            arguments: json!({}),
        },
    ]
}

/// How a shopper's HTTP client treats its connection between calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Connection {
    /// Kept, as the app's client does when signed in to a shop (ragent's
    /// `mcp/connect.rs`).
    Kept,
    /// A new one for every call: the MCP library's default client, which
    /// the shoppers of the report of 2026-12-02 used. The goals compare
    /// with that report, so they are judged with its harness.
    EachCall,
}

/// How the rows name [`Connection::EachCall`]'s cells.
const EACH_CALL: &str = "a connection a call, as in the report of 2026-12-02";

/// A shopper's MCP client, through the balancer at `lb`, with their token.
async fn connect(
    lb: SocketAddr,
    token: &str,
    connection: Connection,
) -> Result<Client, BenchError> {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{lb}{MCP_PATH}"))
        .auth_header(token.to_owned());
    let transport = match connection {
        Connection::Kept => {
            StreamableHttpClientTransport::with_client(reqwest::Client::new(), config)
        }
        Connection::EachCall => StreamableHttpClientTransport::from_config(config),
    };
    ().serve(transport)
        .await
        .map_err(|e| BenchError::Setup(format!("a shopper connecting: {e}")))
}

/// One call; a tool error is a failure, not a fast answer.
async fn call(client: &Client, read: &Read) -> Result<Duration, BenchError> {
    let arguments = match &read.arguments {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let params = CallToolRequestParams::new(read.tool.to_owned()).with_arguments(arguments);
    let started = Instant::now();
    let result = client
        .call_tool(params)
        .await
        .map_err(|e| BenchError::Run(format!("{}: {e}", read.tool)))?;
    let took = started.elapsed();
    if result.is_error == Some(true) {
        return Err(BenchError::Run(format!(
            "{} refused: {:?}",
            read.tool, result.content
        )));
    }
    Ok(took)
}

/// One measurement: `shoppers` each making `each` sequential calls at once.
struct Cell {
    instances: usize,
    concurrency: usize,
    connection: Connection,
    label: &'static str,
    calls: usize,
    wall: Duration,
    latency: Summary,
    /// What the cell's calls cost each part of the stack.
    cpu: CpuSnapshot,
}

impl Cell {
    fn rate(&self) -> f64 {
        self.calls as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// CPU per call of the shop's side of the stack: the instances,
    /// HAProxy and PostgreSQL (the shoppers' clients are not the shop's).
    fn stack_cpu_per_call(&self) -> Duration {
        per_call(self.cpu.stack(), self.calls)
    }
}

async fn measure(
    shoppers: &[Client],
    read: &Read,
    each: usize,
) -> Result<(Duration, Summary), BenchError> {
    let started = Instant::now();
    let per_shopper = futures::future::join_all(shoppers.iter().map(|client| async move {
        let mut samples = Vec::with_capacity(each);
        for _ in 0..each {
            samples.push(call(client, read).await?);
        }
        Ok::<_, BenchError>(samples)
    }))
    .await;
    let wall = started.elapsed();
    let mut samples = Vec::new();
    for shopper in per_shopper {
        samples.extend(shopper?);
    }
    Ok((wall, summarize(&samples)))
}

/// CPU used so far by each part of the stack.
#[derive(Debug, Clone, Default)]
struct CpuSnapshot {
    instances: Vec<Duration>,
    balancer: Duration,
    postgres: Duration,
    clients: Duration,
    machine: Duration,
}

impl CpuSnapshot {
    fn take(instances: &[u32], balancer: Option<u32>, postgres: Option<u32>) -> Self {
        CpuSnapshot {
            instances: instances
                .iter()
                .map(|&pid| process_cost::cpu_time(pid))
                .collect(),
            balancer: balancer.map(process_cost::cpu_time).unwrap_or_default(),
            postgres: postgres
                .map(process_cost::cpu_time_with_children)
                .unwrap_or_default(),
            clients: process_cost::cpu_time(std::process::id()),
            machine: process_cost::machine_busy(),
        }
    }

    fn since(&self, earlier: &CpuSnapshot) -> CpuSnapshot {
        CpuSnapshot {
            instances: self
                .instances
                .iter()
                .zip(&earlier.instances)
                .map(|(now, then)| now.saturating_sub(*then))
                .collect(),
            balancer: self.balancer.saturating_sub(earlier.balancer),
            postgres: self.postgres.saturating_sub(earlier.postgres),
            clients: self.clients.saturating_sub(earlier.clients),
            machine: self.machine.saturating_sub(earlier.machine),
        }
    }

    /// The shop's side: every instance, the balancer and the database.
    fn stack(&self) -> Duration {
        self.instances.iter().sum::<Duration>() + self.balancer + self.postgres
    }
}

/// The processes whose CPU a cell counts.
struct Measured<'a> {
    pids: &'a [u32],
    balancer: Option<u32>,
    postgres: Option<u32>,
}

impl Measured<'_> {
    fn snapshot(&self) -> CpuSnapshot {
        CpuSnapshot::take(self.pids, self.balancer, self.postgres)
    }
}

/// One instance count's run: its measurements and what it cost.
struct Config {
    instances: usize,
    /// With the connection kept; the CPU and wall below are theirs.
    cells: Vec<Cell>,
    /// The goals' reads at [`GOAL_SHOPPERS`], a connection a call; on one
    /// instance only.
    each_call_cells: Vec<Cell>,
    cpu: CpuSnapshot,
    wall: Duration,
    idle_memory: Vec<Memory>,
    loaded_memory: Vec<Memory>,
}

/// An instance and its memory just after it started listening.
struct Running {
    instance: Instance,
    idle: Memory,
}

fn pid_of(instance: &Instance) -> u32 {
    instance.pid().unwrap_or(0)
}

/// The stack's databases, seeded: the shop's own demo data, then the load
/// users made by `bitselect-mcp seed-users`.
fn seeded_database(binary: &Path, shoppers: usize) -> Result<Database, BenchError> {
    let cluster = test_support::postgres::cluster();
    let mut seeding = Ok(());
    let database = cluster.seeded_database(|url| {
        // Opening the shop on an empty database creates and seeds it.
        seeding = bitselect::Shop::open_postgres(url)
            .map(drop)
            .map_err(|e| BenchError::Setup(format!("seeding PostgreSQL: {e}")));
    });
    seeding?;
    let url = cluster.url(&database);
    let output = std::process::Command::new(binary)
        .args([
            "seed-users",
            "--count",
            &shoppers.to_string(),
            "--database-url",
            &url,
        ])
        .env("RUST_LOG", "warn")
        .output()
        .map_err(|e| BenchError::io(binary, e))?;
    if !output.status.success() {
        return Err(BenchError::Setup(format!(
            "seed-users: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    Ok(database)
}

async fn run_configs(
    options: &Options,
    binary: &Path,
    database_url: &str,
) -> Result<Vec<Config>, BenchError> {
    let lb_port = HeldPort::bind();
    let lb = lb_port.addr();
    let resource = format!("http://{lb}{MCP_PATH}");
    let auth = AuthServer::start(&[&resource], TOKEN_TTL_SECS).await;
    let dir = tempfile::tempdir().map_err(|e| BenchError::io(Path::new("temp dir"), e))?;
    let postgres = test_support::postgres::cluster().server_pid();

    // The demo shoppers seed-users made, each signed in once.
    let tokens: Vec<String> = futures::stream::iter(1..=options.shoppers)
        .map(|n| {
            let (issuer, resource) = (auth.issuer.clone(), resource.clone());
            async move {
                let login = bitselect::load_users::load_sub(u32::try_from(n).unwrap_or(u32::MAX));
                test_support::sign_in::sign_in(&issuer, &login, &resource)
                    .await
                    .access_token
            }
        })
        .buffered(SIGN_INS_AT_ONCE)
        .collect()
        .await;

    let reads = reads();
    let mut running: Vec<Running> = Vec::new();
    let mut configs = Vec::new();
    for &count in &options.instances {
        running.truncate(count);
        while running.len() < count {
            let instance = start_instance(binary, database_url, &auth.issuer, &resource).await;
            let idle = process_cost::memory(pid_of(&instance));
            running.push(Running { instance, idle });
        }
        let backends: Vec<SocketAddr> = running.iter().map(|r| r.instance.addr).collect();
        let balancer = Balancer::start(dir.path(), &lb_port, &backends).await;
        let mut clients = Vec::with_capacity(tokens.len());
        for token in &tokens {
            clients.push(connect(lb, token, Connection::Kept).await?);
        }
        for read in &reads {
            measure(&clients, read, WARM_UP_CALLS).await?;
        }

        let pids: Vec<u32> = running.iter().map(|r| pid_of(&r.instance)).collect();
        let measured = Measured {
            pids: &pids,
            balancer: balancer.pid(),
            postgres,
        };
        let before = measured.snapshot();
        let started = Instant::now();
        let mut cells = Vec::new();
        for &concurrency in &options.concurrency {
            let shoppers = &clients[..concurrency.min(clients.len())];
            let each = options.calls.div_ceil(shoppers.len().max(1)).max(1);
            for read in &reads {
                let cell_before = measured.snapshot();
                let (wall, latency) = measure(shoppers, read, each).await?;
                let cpu = measured.snapshot().since(&cell_before);
                cells.push(Cell {
                    instances: count,
                    concurrency: shoppers.len(),
                    connection: Connection::Kept,
                    label: read.label,
                    calls: each * shoppers.len(),
                    wall,
                    latency,
                    cpu,
                });
            }
        }
        let wall = started.elapsed();
        let cpu = measured.snapshot().since(&before);
        let loaded_memory = pids.iter().map(|&pid| process_cost::memory(pid)).collect();
        for client in clients {
            let _ = client.cancel().await;
        }
        let each_call_cells = if count == 1 {
            each_call_cells(lb, &tokens, options.calls, &measured).await?
        } else {
            Vec::new()
        };
        balancer.stop().await;
        configs.push(Config {
            instances: count,
            cells,
            each_call_cells,
            cpu,
            wall,
            idle_memory: running.iter().map(|r| r.idle).collect(),
            loaded_memory,
        });
    }
    Ok(configs)
}

/// The goals' reads on one instance at [`GOAL_SHOPPERS`] shoppers whose
/// clients open a connection for every call, as in the report the goals
/// compare with.
async fn each_call_cells(
    lb: SocketAddr,
    tokens: &[String],
    calls: usize,
    measured: &Measured<'_>,
) -> Result<Vec<Cell>, BenchError> {
    let mut clients = Vec::with_capacity(GOAL_SHOPPERS);
    for token in tokens.iter().take(GOAL_SHOPPERS) {
        clients.push(connect(lb, token, Connection::EachCall).await?);
    }
    let reads: Vec<Read> = reads()
        .into_iter()
        .filter(|read| GOALS.iter().any(|goal| goal.label == read.label))
        .collect();
    for read in &reads {
        measure(&clients, read, WARM_UP_CALLS).await?;
    }
    let each = calls.div_ceil(clients.len().max(1)).max(1);
    let mut cells = Vec::new();
    for read in &reads {
        let before = measured.snapshot();
        let (wall, latency) = measure(&clients, read, each).await?;
        cells.push(Cell {
            instances: 1,
            concurrency: clients.len(),
            connection: Connection::EachCall,
            label: read.label,
            calls: each * clients.len(),
            wall,
            latency,
            cpu: measured.snapshot().since(&before),
        });
    }
    for client in clients {
        let _ = client.cancel().await;
    }
    Ok(cells)
}

fn counted(count: usize, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

fn instances_text(count: usize) -> String {
    counted(count, "instance", "instances")
}

fn shoppers_text(count: usize) -> String {
    counted(count, "shopper", "shoppers")
}

fn cell_rows(configs: &[Config]) -> Vec<Row> {
    configs
        .iter()
        .flat_map(|config| config.cells.iter().chain(&config.each_call_cells))
        .map(|cell| {
            let connection = match cell.connection {
                Connection::Kept => String::new(),
                Connection::EachCall => format!(", {EACH_CALL}"),
            };
            Row::info(
                format!(
                    "{}, {}{connection}: {}",
                    instances_text(cell.instances),
                    shoppers_text(cell.concurrency),
                    cell.label
                ),
                format!(
                    "{:.0} calls/s; p50 {}, p95 {}; CPU {} a call",
                    cell.rate(),
                    ms(cell.latency.median),
                    ms(cell.latency.p95),
                    ms(cell.stack_cpu_per_call())
                ),
                format!(
                    "{} calls through HAProxy in {:.2} s, each shopper its own client and token, calls one after another; \
                     CPU a call: instances {}, HAProxy {}, PostgreSQL {} (the shoppers' clients {} more)",
                    cell.calls,
                    cell.wall.as_secs_f64(),
                    ms(per_call(cell.cpu.instances.iter().sum(), cell.calls)),
                    ms(per_call(cell.cpu.balancer, cell.calls)),
                    ms(per_call(cell.cpu.postgres, cell.calls)),
                    ms(per_call(cell.cpu.clients, cell.calls)),
                ),
            )
        })
        .collect()
}

fn per_call(total: Duration, calls: usize) -> Duration {
    total.div_f64(calls.max(1) as f64)
}

/// A goal for one read on one instance at [`GOAL_SHOPPERS`] shoppers.
struct Goal {
    label: &'static str,
    /// The most CPU a call may cost the shop's side of the stack.
    cpu_per_call: Duration,
    /// Calls a second in the report of 2026-12-02, before the shop's call
    /// path was made leaner; the goal is twice as many.
    calls_per_second_before: f64,
}

const GOAL_SHOPPERS: usize = 16;

const GOALS: [Goal; 2] = [
    Goal {
        label: "query_cart",
        cpu_per_call: Duration::from_micros(1_000),
        calls_per_second_before: 1109.0,
    },
    Goal {
        label: "search_product by keyword",
        cpu_per_call: Duration::from_micros(1_500),
        calls_per_second_before: 743.0,
    },
];

/// The cell of `goal`'s read at [`GOAL_SHOPPERS`] shoppers.
fn goal_cell<'a>(mut cells: impl Iterator<Item = &'a Cell>, goal: &Goal) -> Option<&'a Cell> {
    cells.find(|cell| cell.label == goal.label && cell.concurrency == GOAL_SHOPPERS)
}

/// The goals judged on one instance at [`GOAL_SHOPPERS`] shoppers, with
/// the harness of the report they compare with (a connection a call);
/// beside them, the same reads with the connection kept, as the app calls.
fn goal_rows(configs: &[Config]) -> Vec<Row> {
    let one_instance = || configs.iter().filter(|config| config.instances == 1);
    let mut rows = Vec::new();
    for goal in &GOALS {
        let judged = goal_cell(one_instance().flat_map(|c| &c.each_call_cells), goal);
        let kept = goal_cell(one_instance().flat_map(|c| &c.cells), goal);
        let name = |what: &str| {
            format!(
                "1 instance, {GOAL_SHOPPERS} shoppers: {}, {what}",
                goal.label
            )
        };
        let wanted = 2.0 * goal.calls_per_second_before;
        if let Some(cell) = judged {
            let (cpu, rate) = (cell.stack_cpu_per_call(), cell.rate());
            rows.push(Row::judged(
                name("CPU a call across the stack"),
                ms(cpu),
                format!("≤ {}", ms(goal.cpu_per_call)),
                cpu <= goal.cpu_per_call,
                format!(
                    "{EACH_CALL}; user + system of the instance, HAProxy and PostgreSQL over the cell's calls, divided by the calls"
                ),
            ));
            rows.push(Row::judged(
                name("calls a second"),
                format!(
                    "{rate:.0} calls/s ({:.2}x)",
                    rate / goal.calls_per_second_before
                ),
                format!("≥ {wanted:.0} calls/s (2x)"),
                rate >= wanted,
                format!(
                    "{EACH_CALL}; {:.0} calls/s in the report of 2026-12-02",
                    goal.calls_per_second_before
                ),
            ));
        }
        if let Some(cell) = kept {
            let (cpu, rate) = (cell.stack_cpu_per_call(), cell.rate());
            rows.push(Row::info(
                name("connection kept, as the app calls"),
                format!(
                    "{rate:.0} calls/s ({:.2}x the report of 2026-12-02); CPU {} a call",
                    rate / goal.calls_per_second_before,
                    ms(cpu)
                ),
                "not the goals' harness: the shoppers of 2026-12-02 opened a connection a call",
            ));
        }
    }
    rows
}

/// Throughput gained per instance added, from the fewest instances run to
/// the most, for each concurrency and read.
fn scaling_rows(configs: &[Config]) -> Vec<Row> {
    let (Some(first), Some(last)) = (configs.first(), configs.last()) else {
        return Vec::new();
    };
    if last.instances <= first.instances {
        return Vec::new();
    }
    let added = (last.instances - first.instances) as f64;
    first
        .cells
        .iter()
        .filter_map(|few| {
            let many = last
                .cells
                .iter()
                .find(|c| c.concurrency == few.concurrency && c.label == few.label)?;
            let gained = (many.rate() - few.rate()) / added;
            Some(Row::info(
                format!(
                    "{}, {}: throughput gained per added instance",
                    shoppers_text(few.concurrency),
                    few.label
                ),
                format!("{gained:+.0} calls/s"),
                format!(
                    "{} -> {}: {:.0} -> {:.0} calls/s ({:.2}x)",
                    instances_text(first.instances),
                    instances_text(last.instances),
                    few.rate(),
                    many.rate(),
                    many.rate() / few.rate().max(1e-9)
                ),
            ))
        })
        .collect()
}

fn seconds(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn cost_rows(configs: &[Config]) -> Vec<Row> {
    let mut rows = Vec::new();
    for config in configs {
        let name = instances_text(config.instances);
        let calls: usize = config.cells.iter().map(|c| c.calls).sum();
        let per_thousand = |d: Duration| seconds(d.mul_f64(1000.0 / calls.max(1) as f64));
        let instances_total: Duration = config.cpu.instances.iter().sum();
        rows.push(Row::info(
            format!("{name}: CPU per 1,000 calls"),
            format!(
                "instances {}, HAProxy {}, PostgreSQL {}, clients {}; machine {}",
                per_thousand(instances_total),
                per_thousand(config.cpu.balancer),
                per_thousand(config.cpu.postgres),
                per_thousand(config.cpu.clients),
                per_thousand(config.cpu.machine)
            ),
            format!(
                "user + system CPU over all {calls} timed calls of the {name} runs ({} wall); \
                 clients: this process's MCP clients; machine: every busy core, other work included",
                seconds(config.wall)
            ),
        ));
        let each: Vec<String> = config.cpu.instances.iter().map(|d| seconds(*d)).collect();
        rows.push(Row::info(
            format!("{name}: CPU per instance"),
            each.join(", "),
            format!(
                "user + system over the {} wall of the timed calls; {} of CPU per instance and wall second on average",
                seconds(config.wall),
                format_args!(
                    "{:.2} s",
                    instances_total.as_secs_f64()
                        / config.cpu.instances.len().max(1) as f64
                        / config.wall.as_secs_f64().max(1e-9)
                )
            ),
        ));
        let memory: Vec<String> = config
            .idle_memory
            .iter()
            .zip(&config.loaded_memory)
            .map(|(idle, loaded)| {
                format!(
                    "{} -> {} (peak {})",
                    mib(idle.resident),
                    mib(loaded.resident),
                    mib(loaded.peak)
                )
            })
            .collect();
        rows.push(Row::info(
            format!("{name}: RSS per instance, started -> after the calls"),
            memory.join("; "),
            "VmRSS when it first listened, and VmRSS and VmHWM after the timed calls",
        ));
    }
    rows
}

fn machine_row() -> Row {
    let cores = std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1);
    Row::info(
        "what shares the machine",
        format!("{cores} cores for everything"),
        "the shop instances, HAProxy, PostgreSQL, the authorization server and the shoppers' \
         clients (this process) all run on these cores: an added instance adds no core, so the \
         gain per instance here is what more processes on the same cores give, not what another \
         machine would",
    )
}

pub fn run(options: &Options, runtime: &tokio::runtime::Runtime) -> Result<Part, BenchError> {
    let mut options_sorted = options.instances.clone();
    options_sorted.sort_unstable();
    options_sorted.dedup();
    let largest = options.concurrency.iter().copied().max().unwrap_or(1);
    let options = Options {
        shoppers: options.shoppers.max(largest).max(1),
        calls: options.calls.max(1),
        concurrency: options.concurrency.clone(),
        instances: options_sorted,
        search_repeats: options.search_repeats,
    };
    let binary = shop_binary()?;
    // Dropped, and the database with it, when the part is done.
    let database = seeded_database(&binary, options.shoppers)?;
    let database_url = test_support::postgres::cluster().url(&database);

    let mut rows = Vec::new();
    let sqlite_dir = tempfile::tempdir().map_err(|e| BenchError::io(Path::new("temp dir"), e))?;
    let sqlite = bitselect::Shop::open(sqlite_dir.path())
        .map_err(|e| BenchError::Setup(format!("opening the SQLite shop: {e}")))?;
    rows.extend(keyword_search::rows(
        "SQLite",
        &sqlite,
        options.search_repeats,
    )?);
    drop(sqlite);
    let postgres = bitselect::Shop::open_postgres(&database_url)
        .map_err(|e| BenchError::Setup(format!("opening the PostgreSQL shop: {e}")))?;
    rows.extend(keyword_search::rows(
        "PostgreSQL",
        &postgres,
        options.search_repeats,
    )?);
    drop(postgres);

    let configs = runtime.block_on(run_configs(&options, &binary, &database_url))?;
    rows.extend(goal_rows(&configs));
    rows.extend(cell_rows(&configs));
    rows.extend(scaling_rows(&configs));
    rows.extend(cost_rows(&configs));
    rows.push(machine_row());
    rows.push(Row::info(
        "shoppers signed in",
        options.shoppers.to_string(),
        "demo users made by `bitselect-mcp seed-users`, each signed in at the authorization server \
         (oidc-provider) with the authorization-code flow; tokens checked by each instance against its JWKS",
    ));
    rows.push(load_row());
    Ok(Part {
        part: "shop-service".into(),
        title: "6. The shop as a service: PostgreSQL, instances behind HAProxy".into(),
        rows,
    })
}
