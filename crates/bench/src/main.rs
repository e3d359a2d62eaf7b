//! `bitselect-bench`: runs one benchmark part and writes
//! `<target dir>/bench-results/<part>.json`; `report` turns those files
//! into one Markdown document.

use std::error::Error;
use std::path::Path;

use bitselect_bench::{
    BenchError, agent_rounds, app_data_dir::AppDataDir, app_start, proxy, report, respond_latency,
    results, shop_service, shop_throughput, soak,
};

const USAGE: &str = "\
usage: bitselect-bench <command> [options]

  agent-rounds     [--sessions N] [--rounds N] [--long-runs N]
  respond-latency  [--sizes 10,1000,10000] [--repeats N]
  shop-throughput  [--reads N] [--callers N] [--orders N]
  shop-service     [--shoppers N] [--calls N] [--concurrency 1,16,64]
                   [--instances 1,3] [--search-repeats N]
  app-start        --app BINARY --bare BINARY [--launches N]   (under a display)
  soak             [--runs N] [--restart-every N] [--session-runs N] [--sample-every N]
  soak-opening     --data DIR [--opening N] [--first-run N] [--runs N] ...   (used by soak)
  report           --out FILE
  stdio-proxy      --arrivals FILE -- PROGRAM [ARGS...]   (used by respond-latency)

Results go to $CARGO_TARGET_DIR/bench-results (else the target dir this
binary was built in).";

/// `--name value` pairs after the command.
struct Flags(Vec<(String, String)>);

impl Flags {
    fn parse(args: &[String], known: &[&str]) -> Result<Flags, BenchError> {
        let mut pairs = Vec::new();
        let mut rest = args.iter();
        while let Some(flag) = rest.next() {
            let name = flag
                .strip_prefix("--")
                .filter(|n| known.contains(n))
                .ok_or_else(|| BenchError::Usage(format!("unknown option {flag}")))?;
            let value = rest
                .next()
                .ok_or_else(|| BenchError::Usage(format!("{flag} needs a value")))?;
            pairs.push((name.to_string(), value.clone()));
        }
        Ok(Flags(pairs))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn number(&self, name: &str, default: usize) -> Result<usize, BenchError> {
        match self.get(name) {
            None => Ok(default),
            Some(text) => text
                .replace(['_', ','], "")
                .parse()
                .map_err(|_| BenchError::Usage(format!("--{name} takes a number, not {text}"))),
        }
    }
}

/// A comma-separated list of numbers, e.g. `1,16,64`.
fn numbers(flags: &Flags, name: &str, default: Vec<usize>) -> Result<Vec<usize>, BenchError> {
    match flags.get(name) {
        None => Ok(default),
        Some(text) => text
            .split(',')
            .map(|s| s.trim().replace('_', "").parse())
            .collect::<Result<_, _>>()
            .map_err(|_| BenchError::Usage(format!("--{name} takes numbers, not {text}"))),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, BenchError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| BenchError::Setup(format!("tokio runtime: {e}")))
}

fn write(part: &results::Part) -> Result<(), BenchError> {
    let path = part.write(&results::results_dir()?)?;
    println!("{}: wrote {}", part.title, path.display());
    for row in &part.rows {
        println!("  {}: {}", row.metric, row.value);
    }
    Ok(())
}

fn run(args: &[String]) -> Result<(), BenchError> {
    let Some((command, rest)) = args.split_first() else {
        return Err(BenchError::Usage("no command".into()));
    };
    match command.as_str() {
        "agent-rounds" => {
            let flags = Flags::parse(rest, &["sessions", "rounds", "long-runs"])?;
            let defaults = agent_rounds::Options::default();
            let options = agent_rounds::Options {
                sessions: flags.number("sessions", defaults.sessions)?,
                rounds: flags.number("rounds", defaults.rounds)?.max(1),
                long_runs: flags.number("long-runs", defaults.long_runs)?,
            };
            write(&runtime()?.block_on(agent_rounds::run(&options))?)
        }
        "respond-latency" => {
            let flags = Flags::parse(rest, &["sizes", "repeats"])?;
            let defaults = respond_latency::Options::default();
            let sizes = numbers(&flags, "sizes", defaults.sizes)?;
            let options = respond_latency::Options {
                sizes,
                repeats: flags.number("repeats", defaults.repeats)?.max(1),
            };
            write(&runtime()?.block_on(respond_latency::run(&options))?)
        }
        "shop-throughput" => {
            let flags = Flags::parse(rest, &["reads", "callers", "orders"])?;
            let defaults = shop_throughput::Options::default();
            let options = shop_throughput::Options {
                reads: flags.number("reads", defaults.reads)?.max(1),
                callers: flags.number("callers", defaults.callers)?,
                orders: flags.number("orders", defaults.orders)?,
            };
            write(&runtime()?.block_on(shop_throughput::run(&options))?)
        }
        "shop-service" => {
            let flags = Flags::parse(
                rest,
                &[
                    "shoppers",
                    "calls",
                    "concurrency",
                    "instances",
                    "search-repeats",
                ],
            )?;
            let defaults = shop_service::Options::default();
            let positive = |list: Vec<usize>| list.into_iter().filter(|&n| n > 0).collect();
            let options = shop_service::Options {
                shoppers: flags.number("shoppers", defaults.shoppers)?,
                calls: flags.number("calls", defaults.calls)?,
                concurrency: positive(numbers(&flags, "concurrency", defaults.concurrency)?),
                instances: positive(numbers(&flags, "instances", defaults.instances)?),
                search_repeats: flags.number("search-repeats", defaults.search_repeats)?,
            };
            write(&shop_service::run(&options, &runtime()?)?)
        }
        "soak" => {
            let flags = Flags::parse(
                rest,
                &["runs", "restart-every", "session-runs", "sample-every"],
            )?;
            let defaults = soak::Options::default();
            let options = soak::Options {
                runs: flags.number("runs", defaults.runs)?.max(1),
                restart_every: flags
                    .number("restart-every", defaults.restart_every)?
                    .max(1),
                session_runs: flags.number("session-runs", defaults.session_runs)?.max(1),
                sample_every: flags.number("sample-every", defaults.sample_every)?.max(1),
            };
            write(&soak::run(&options)?)
        }
        "soak-opening" => {
            let flags = Flags::parse(
                rest,
                &[
                    "data",
                    "opening",
                    "first-run",
                    "runs",
                    "session-runs",
                    "sample-every",
                ],
            )?;
            let data = flags
                .get("data")
                .map(std::path::PathBuf::from)
                .ok_or_else(|| BenchError::Usage("soak-opening needs --data DIR".into()))?;
            let defaults = soak::Options::default();
            let options = soak::Options {
                session_runs: flags.number("session-runs", defaults.session_runs)?.max(1),
                sample_every: flags.number("sample-every", defaults.sample_every)?.max(1),
                ..defaults
            };
            let opening = soak::Opening {
                index: flags.number("opening", 0)?,
                first_run: flags.number("first-run", 1)?.max(1),
                runs: flags.number("runs", 1_000)?,
            };
            let report = runtime()?.block_on(soak::run_opening(&options, &opening, &data))?;
            println!("{}", serde_json::to_string(&report)?);
            Ok(())
        }
        "app-start" => {
            let flags = Flags::parse(rest, &["app", "bare", "launches"])?;
            let binary = |name: &str| {
                flags
                    .get(name)
                    .map(std::path::PathBuf::from)
                    .ok_or_else(|| BenchError::Usage(format!("app-start needs --{name} BINARY")))
            };
            // The app runs on a data directory of its own, kept across launches.
            let data = AppDataDir::fresh()?;
            let app = app_start::Subject {
                name: "app",
                binary: binary("app")?,
                args: vec!["--data-dir".into(), data.path().display().to_string()],
            };
            let bare = app_start::Subject {
                name: "bare window",
                binary: binary("bare")?,
                args: Vec::new(),
            };
            write(&app_start::run(
                &app,
                &bare,
                &data,
                flags.number("launches", 5)?.max(1),
            )?)
        }
        "report" => {
            let flags = Flags::parse(rest, &["out"])?;
            let out = flags
                .get("out")
                .ok_or_else(|| BenchError::Usage("report needs --out FILE".into()))?;
            let criterion = results::target_dir()?.join("criterion");
            report::run(&results::results_dir()?, &criterion, Path::new(out))?;
            println!("wrote {out}");
            Ok(())
        }
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(BenchError::Usage(format!("unknown command {other}"))),
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|c| c == "stdio-proxy") {
        // Exits with the server's status, as if it were the server.
        let code = proxy::run(&args[1..])?;
        std::process::exit(code);
    }
    match run(&args) {
        Err(BenchError::Usage(message)) => Err(format!("{message}\n\n{USAGE}").into()),
        other => Ok(other?),
    }
}
