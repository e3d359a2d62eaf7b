//! Part 7, the soak: many scripted runs in one data directory against the
//! real local shop, as a week of shopping would make them: reads, cards
//! approved, denied, edited and left for a new message, the app closed and
//! started again every `restart_every` runs: each opening is a process of
//! its own (`bitselect-bench soak-opening`), as the app is, so one
//! opening's memory is not another's. After every write the shop's
//! cart is read to see it applied exactly once; at the end no card is left
//! unanswered. Memory, open files and the database's size are sampled as
//! it goes: after the first block (the warm-up) they must stay flat, and
//! the database must grow by the same bytes per message.

use std::path::Path;
use std::time::Instant;

use ragent::AgentError;
use ragent::protocol::{CallDecision, ConfirmationCard, Decision, StopReason};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use test_support::ScriptedModel;

use crate::BenchError;
use crate::harness::BenchAgent;
use crate::results::{Part, Row, load_row, results_dir};
use crate::shop::{IPHONE, SHOP_SERVER, shop_entry};
use crate::turns::{call_turn, text_turn};

#[derive(Debug, Clone)]
pub struct Options {
    pub runs: usize,
    /// The app is closed and opened again after this many runs.
    pub restart_every: usize,
    /// Runs in one conversation before the next starts.
    pub session_runs: usize,
    /// Runs between two samples of memory, files and size.
    pub sample_every: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            runs: 10_000,
            restart_every: 1_000,
            session_runs: 50,
            sample_every: 100,
        }
    }
}

/// The most memory or open files may grow after the warm-up, and the most
/// the bytes a message takes may change.
const MAX_GROWTH: f64 = 0.10;
const MAX_SIZE_DRIFT: f64 = 0.25;

/// The openings of the app that warm it up (caches filling, the allocator
/// settling), and how many are needed to judge the rest: open files and
/// size need one before and one after the split, memory more, since it
/// moves a little with each opening.
const WARM_UP_OPENINGS: usize = 2;
const MIN_OPENINGS_FOR_FILES: usize = WARM_UP_OPENINGS + 2;
const MIN_OPENINGS_FOR_MEMORY: usize = WARM_UP_OPENINGS + 6;

/// What the runs do, in turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Approve,
    Deny,
    Edit,
    Supersede,
}

const KINDS: [Kind; 5] = [
    Kind::Read,
    Kind::Approve,
    Kind::Deny,
    Kind::Edit,
    Kind::Supersede,
];

/// One look at the process after `runs` runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    pub runs: usize,
    /// Which opening of the app (0 first) it was taken in.
    pub block: usize,
    pub rss_kib: u64,
    pub open_files: usize,
    pub shop_rss_kib: Option<u64>,
    pub messages: i64,
    pub db_bytes: i64,
}

/// What the runs of one opening, or of all, did.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Tally {
    reads: usize,
    cards: usize,
    approved: usize,
    denied: usize,
    edited: usize,
    superseded: usize,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.reads += other.reads;
        self.cards += other.cards;
        self.approved += other.approved;
        self.denied += other.denied;
        self.edited += other.edited;
        self.superseded += other.superseded;
    }
}

/// What one opening of the app reports to the soak: its runs, its samples,
/// and the cards still waiting when it closed.
#[derive(Debug, Serialize, Deserialize)]
pub struct OpeningReport {
    pub tally: Tally,
    pub samples: Vec<Sample>,
    pub unanswered: usize,
}

/// Which runs an opening makes.
#[derive(Debug, Clone)]
pub struct Opening {
    /// 0 for the first opening of the data directory.
    pub index: usize,
    /// The number of its first run, counting from 1 across openings.
    pub first_run: usize,
    pub runs: usize,
}

/// One opening's state across its runs.
struct Soak<'a> {
    opening: &'a Opening,
    model: ScriptedModel,
    agent: BenchAgent,
    session: String,
    /// What the cart should hold of the iPhone, by the writes approved;
    /// read from the shop before the first write (the shop makes its
    /// database when it first starts).
    in_cart: Option<i64>,
    tally: Tally,
    samples: Vec<Sample>,
}

/// The soak: a data directory, and one process after another opening it
/// for `restart_every` runs each.
pub fn run(options: &Options) -> Result<Part, BenchError> {
    let data = tempfile::tempdir().map_err(|e| BenchError::io(Path::new("temp dir"), e))?;
    let me = std::env::current_exe().map_err(|e| BenchError::io(Path::new("current exe"), e))?;
    let started = Instant::now();
    let (mut tally, mut samples, mut unanswered) = (Tally::default(), Vec::new(), 0);
    let mut first_run = 1;
    let mut index = 0;
    while first_run <= options.runs {
        let runs = options.restart_every.min(options.runs + 1 - first_run);
        let output = std::process::Command::new(&me)
            .arg("soak-opening")
            .arg("--data")
            .arg(data.path())
            .args(["--opening", &index.to_string()])
            .args(["--first-run", &first_run.to_string()])
            .args(["--runs", &runs.to_string()])
            .args(["--session-runs", &options.session_runs.to_string()])
            .args(["--sample-every", &options.sample_every.to_string()])
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|e| BenchError::io(&me, e))?;
        if !output.status.success() {
            return Err(BenchError::Run(format!(
                "opening {} ended with {}",
                index + 1,
                output.status
            )));
        }
        let report: OpeningReport = serde_json::from_slice(&output.stdout)?;
        tally.add(&report.tally);
        samples.extend(report.samples);
        unanswered = report.unanswered;
        first_run += runs;
        index += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    write_samples(&samples)?;
    Ok(part(options, &tally, &samples, seconds, unanswered, index))
}

/// One opening of the app on `data`: its runs, sampled, then closed as the
/// app closes. Writes its report as JSON on stdout.
pub async fn run_opening(
    options: &Options,
    opening: &Opening,
    data: &Path,
) -> Result<OpeningReport, BenchError> {
    let model =
        ScriptedModel::start().map_err(|e| BenchError::Setup(format!("the fake model: {e}")))?;
    let agent = BenchAgent::open_at(data, &model, 4, shop_entry).await?;
    let session = agent.agent.create_session(None)?.id;
    let mut soak = Soak {
        opening,
        model,
        agent,
        session,
        in_cart: None,
        tally: Tally::default(),
        samples: Vec::new(),
    };
    let last = opening.first_run + opening.runs - 1;
    for run in opening.first_run..=last {
        if run > opening.first_run && (run - 1) % options.session_runs == 0 {
            soak.session = soak.agent.agent.create_session(None)?.id;
        }
        soak.one_run(KINDS[(run - 1) % KINDS.len()]).await?;
        // The fake model keeps what it was sent, the timed hub what it
        // timed: the soak measures the app, so neither is let grow.
        drop(soak.model.take_received());
        drop(soak.agent.tools.take());
        if run % options.sample_every == 0 || run == last {
            soak.sample(run).await?;
        }
    }
    let unanswered = soak.unanswered_cards()?;
    let Soak {
        agent,
        tally,
        samples,
        ..
    } = soak;
    agent.shutdown().await;
    Ok(OpeningReport {
        tally,
        samples,
        unanswered,
    })
}

impl Soak<'_> {
    /// What the cart holds of the iPhone, as the writes so far left it.
    fn in_cart(&mut self) -> Result<i64, BenchError> {
        if let Some(known) = self.in_cart {
            return Ok(known);
        }
        let found = cart_quantity(&self.agent.data)?;
        self.in_cart = Some(found);
        Ok(found)
    }

    /// The write that keeps the cart between what it held and one more.
    fn next_write(&mut self) -> Result<Value, BenchError> {
        let action = if self.in_cart()? % 2 == 0 {
            "add"
        } else {
            "decrease"
        };
        Ok(json!({"skuCode": IPHONE, "action": action, "quantity": 1}))
    }

    async fn one_run(&mut self, kind: Kind) -> Result<(), BenchError> {
        let update = format!("{SHOP_SERVER}__update_cart_item");
        let session = self.session.clone();
        match kind {
            Kind::Read => {
                self.model.push_turn(call_turn(
                    &format!("{SHOP_SERVER}__search_product"),
                    &json!({"keyword": "降噪耳机"}),
                ));
                self.model.push_turn(text_turn("找到了几款降噪耳机。"));
                let agent = &mut self.agent;
                agent.agent.send_message(&session, "有什么降噪耳机？")?;
                expect_done(agent.until_stop(&session).await?)?;
                self.tally.reads += 1;
            }
            Kind::Approve | Kind::Deny | Kind::Edit | Kind::Supersede => {
                let wanted = self.next_write()?;
                let proposed = if kind == Kind::Edit {
                    json!({"skuCode": IPHONE, "action": "add", "quantity": 3})
                } else {
                    wanted.clone()
                };
                self.model.push_turn(call_turn(&update, &proposed));
                let agent = &mut self.agent;
                agent.agent.send_message(&session, "帮我改一下购物车")?;
                let card = expect_card(agent.until_stop(&session).await?)?;
                self.tally.cards += 1;
                self.answer(kind, &card, wanted).await?;
            }
        }
        Ok(())
    }

    /// Answers `card` as `kind` says, follows the run to its end and checks
    /// the cart holds what the answer should leave.
    async fn answer(
        &mut self,
        kind: Kind,
        card: &ConfirmationCard,
        wanted: Value,
    ) -> Result<(), BenchError> {
        let session = self.session.clone();
        let call_id = card.calls[0].call_id.clone();
        let decide = |decision: Decision| {
            vec![CallDecision {
                call_id: call_id.clone(),
                decision,
            }]
        };
        self.model.push_turn(text_turn("好的。"));
        let agent = &mut self.agent;
        match kind {
            Kind::Approve => {
                agent
                    .agent
                    .respond(&session, &card.reply_id, decide(Decision::Approve))
                    .await?;
            }
            Kind::Deny => {
                let reason = Some("先不要".to_string());
                agent
                    .agent
                    .respond(&session, &card.reply_id, decide(Decision::Deny { reason }))
                    .await?;
            }
            Kind::Edit => {
                // An edit comes back on the card with what it would do;
                // approving it there runs it.
                let edited = Decision::ApproveEdited { arguments: wanted };
                match agent
                    .agent
                    .respond(&session, &card.reply_id, decide(edited))
                    .await
                {
                    Err(AgentError::EditPreviewed { .. }) => {}
                    other => {
                        return Err(BenchError::Run(format!(
                            "an edit was not shown again: {other:?}"
                        )));
                    }
                }
                agent
                    .agent
                    .respond(&session, &card.reply_id, decide(Decision::Approve))
                    .await?;
            }
            Kind::Supersede => {
                agent.agent.send_message(&session, "算了，先不改")?;
            }
            Kind::Read => return Err(BenchError::Run("a read has no card".into())),
        }
        let (reason, card_shown) = agent.until_stop(&session).await?;
        // The edit's card, shown again with what it would do, is in the run.
        expect_done((reason, card_shown.filter(|_| kind != Kind::Edit)))?;
        let wrote = matches!(kind, Kind::Approve | Kind::Edit);
        let before = self.in_cart()?;
        let expected = match (wrote, before % 2) {
            (false, _) => before,
            (true, 0) => before + 1,
            (true, _) => before - 1,
        };
        self.in_cart = Some(expected);
        match kind {
            Kind::Approve => self.tally.approved += 1,
            Kind::Deny => self.tally.denied += 1,
            Kind::Edit => self.tally.edited += 1,
            Kind::Supersede => self.tally.superseded += 1,
            Kind::Read => {}
        }
        let found = cart_quantity(&self.agent.data)?;
        if found != expected {
            return Err(BenchError::Run(format!(
                "after a {kind:?} the cart holds {found} iPhones, not {expected}: a write ran {}",
                if wrote {
                    "other than once"
                } else {
                    "though it was not approved"
                }
            )));
        }
        Ok(())
    }

    async fn sample(&mut self, runs: usize) -> Result<(), BenchError> {
        let block = self.opening.index;
        let agent = &mut self.agent;
        let shop_pid = agent
            .agent
            .server_status()
            .await
            .into_iter()
            .find(|s| s.name == SHOP_SERVER)
            .and_then(|s| s.pid);
        let db = rusqlite::Connection::open(agent.db_path())?;
        let messages = db.query_row("SELECT count(*) FROM messages", [], |r| r.get(0))?;
        let db_bytes = db.query_row(
            "SELECT (page_count - freelist_count) * page_size
             FROM pragma_page_count, pragma_freelist_count, pragma_page_size",
            [],
            |r| r.get(0),
        )?;
        self.samples.push(Sample {
            runs,
            block,
            rss_kib: rss_kib("self").unwrap_or(0),
            open_files: open_files()?,
            shop_rss_kib: shop_pid.and_then(|pid| rss_kib(&pid.to_string())),
            messages,
            db_bytes,
        });
        Ok(())
    }

    /// Cards still waiting in any conversation: none, if every card was
    /// answered.
    fn unanswered_cards(&mut self) -> Result<usize, BenchError> {
        let agent = &mut self.agent;
        let mut waiting = 0;
        for session in agent.agent.list_sessions()? {
            if agent.agent.transcript(&session.id)?.pending.is_some() {
                waiting += 1;
            }
        }
        Ok(waiting)
    }
}

fn part(
    o: &Options,
    t: &Tally,
    samples: &[Sample],
    seconds: f64,
    unanswered: usize,
    openings: usize,
) -> Part {
    let mut rows = vec![
        Row::info(
            "runs",
            format!("{}", o.runs),
            format!(
                "{} reads, {} cards ({} approved, {} denied, {} edited, {} left for a new \
                 message), {} conversations, the app opened {} times, in {seconds:.0} s",
                t.reads,
                t.cards,
                t.approved,
                t.denied,
                t.edited,
                t.superseded,
                o.runs.div_ceil(o.session_runs),
                openings
            ),
        ),
        Row::judged(
            "cards left unanswered",
            unanswered.to_string(),
            "0",
            unanswered == 0 && t.cards == t.approved + t.denied + t.edited + t.superseded,
            "every card was approved, denied, edited or left for a new message, and none \
             waits at the end",
        ),
        Row::info(
            "writes applied other than once",
            "0",
            format!(
                "the cart read after each of the {} writes and {} refusals; the soak stops \
                 at the first that differs",
                t.approved + t.edited,
                t.denied + t.superseded
            ),
        ),
    ];
    rows.extend(flatness_rows(samples));
    rows.push(load_row());
    Part {
        part: "soak".into(),
        title: "7. Soak: many runs in one data directory".into(),
        rows,
    }
}

/// Memory, open files and bytes per message after the warm-up (the
/// first two openings of the app): the openings after it split in an
/// earlier and a later half, each opening's peak, the halves' means
/// compared. Memory moves by a few percent from one opening to the next
/// (what the allocator keeps), so it is judged only over enough of
/// them; fewer are shown, not judged.
fn flatness_rows(samples: &[Sample]) -> Vec<Row> {
    let openings = samples.last().map_or(0, |s| s.block + 1);
    if openings < MIN_OPENINGS_FOR_FILES {
        return vec![Row::info(
            "memory, open files, size",
            "not judged",
            format!("{openings} openings of the app: too few to leave two for the warm-up"),
        )];
    }
    let after_warm_up = openings - WARM_UP_OPENINGS;
    let split = WARM_UP_OPENINGS + after_warm_up / 2;
    let early: Vec<&Sample> = samples
        .iter()
        .filter(|s| (WARM_UP_OPENINGS..split).contains(&s.block))
        .collect();
    let late: Vec<&Sample> = samples.iter().filter(|s| s.block >= split).collect();
    // The mean over the openings of each opening's highest figure.
    let mean_peak = |samples: &[&Sample], of: &dyn Fn(&Sample) -> f64| {
        let mut peaks: std::collections::BTreeMap<usize, f64> = Default::default();
        for s in samples {
            let peak = peaks.entry(s.block).or_insert(0.0);
            *peak = peak.max(of(s));
        }
        peaks.values().sum::<f64>() / peaks.len().max(1) as f64
    };
    let growth = |of: &dyn Fn(&Sample) -> f64| mean_peak(&late, of) / mean_peak(&early, of) - 1.0;
    let rss = growth(&|s| s.rss_kib as f64);
    let files = growth(&|s| s.open_files as f64);
    let per_message = |samples: &[&Sample]| {
        let (first, last) = (samples[0], samples[samples.len() - 1]);
        (last.db_bytes - first.db_bytes) as f64 / (last.messages - first.messages).max(1) as f64
    };
    let (before, after) = (per_message(&early), per_message(&late));
    let drift = after / before - 1.0;
    let shop = late.iter().filter_map(|s| s.shop_rss_kib).max();
    let halves = format!(
        "openings {}-{} against {}-{} (the first {WARM_UP_OPENINGS} are the warm-up)",
        WARM_UP_OPENINGS + 1,
        split,
        split + 1,
        openings
    );
    let memory = format!(
        "the mean of each opening's peak: {:.0} KiB then {:.0} KiB, {halves}; the shop's \
         last peak {}",
        mean_peak(&early, &|s| s.rss_kib as f64),
        mean_peak(&late, &|s| s.rss_kib as f64),
        shop.map_or("unknown".to_string(), |kib| format!("{kib} KiB"))
    );
    let memory_row = if openings >= MIN_OPENINGS_FOR_MEMORY {
        Row::judged(
            "memory (RSS) growth after warm-up",
            percent(rss),
            format!("< {}", percent(MAX_GROWTH)),
            rss < MAX_GROWTH,
            memory,
        )
    } else {
        Row::info(
            "memory (RSS) growth after warm-up",
            percent(rss),
            format!(
                "not judged over {openings} openings (at least {MIN_OPENINGS_FOR_MEMORY}): \
                 {memory}"
            ),
        )
    };
    vec![
        memory_row,
        Row::judged(
            "open files growth after warm-up",
            percent(files),
            format!("< {}", percent(MAX_GROWTH)),
            files < MAX_GROWTH,
            format!(
                "the mean of each opening's peak: {:.0} then {:.0}",
                mean_peak(&early, &|s| s.open_files as f64),
                mean_peak(&late, &|s| s.open_files as f64)
            ),
        ),
        Row::judged(
            "database bytes per message, after warm-up",
            percent(drift),
            format!("within ±{:.1}%", MAX_SIZE_DRIFT * 100.0),
            drift.abs() <= MAX_SIZE_DRIFT,
            format!(
                "{before:.0} then {after:.0} bytes per message added, {halves}; {} \
                 messages in all",
                late[late.len() - 1].messages
            ),
        ),
    ]
}

/// Every sample as a line of `soak-samples.csv` beside the results,
/// for a closer look at how the figures moved.
fn write_samples(samples: &[Sample]) -> Result<(), BenchError> {
    let dir = results_dir()?;
    std::fs::create_dir_all(&dir).map_err(|e| BenchError::io(&dir, e))?;
    let path = dir.join("soak-samples.csv");
    let mut text = String::from("runs,opening,rss_kib,open_files,shop_rss_kib,messages,db_bytes\n");
    for s in samples {
        text.push_str(&format!(
            "{},{},{},{},{},{},{}\n",
            s.runs,
            s.block,
            s.rss_kib,
            s.open_files,
            s.shop_rss_kib.map_or(String::new(), |kib| kib.to_string()),
            s.messages,
            s.db_bytes
        ));
    }
    std::fs::write(&path, text).map_err(|e| BenchError::io(&path, e))
}

fn percent(fraction: f64) -> String {
    format!("{:+.1}%", fraction * 100.0)
}

fn expect_done((reason, card): (StopReason, Option<ConfirmationCard>)) -> Result<(), BenchError> {
    match (reason, card) {
        (StopReason::Completed, None) => Ok(()),
        other => Err(BenchError::Run(format!(
            "the run did not finish: {other:?}"
        ))),
    }
}

fn expect_card(
    (reason, card): (StopReason, Option<ConfirmationCard>),
) -> Result<ConfirmationCard, BenchError> {
    match (reason, card) {
        (StopReason::AwaitingConfirmation { .. }, Some(card)) => Ok(card),
        other => Err(BenchError::Run(format!("no card came: {other:?}"))),
    }
}

/// The iPhones in the shop's cart, read from its database.
fn cart_quantity(data_dir: &Path) -> Result<i64, BenchError> {
    let shop = rusqlite::Connection::open(data_dir.join("shop").join(bitselect::DB_FILE))?;
    let found = shop.query_row(
        "SELECT quantity FROM cart_item WHERE sku_code = ?1",
        [IPHONE],
        |r| r.get(0),
    );
    match found {
        Err(rusqlite::Error::QueryReturnedNoRows) => Ok(0),
        other => Ok(other?),
    }
}

/// The resident memory of a process (`self`, or a pid) in KiB.
fn rss_kib(process: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
}

fn open_files() -> Result<usize, BenchError> {
    let dir = Path::new("/proc/self/fd");
    Ok(std::fs::read_dir(dir)
        .map_err(|e| BenchError::io(dir, e))?
        .count())
}
