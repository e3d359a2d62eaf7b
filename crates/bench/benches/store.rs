//! The core's store: appending a message, loading a session's messages,
//! and what a run does each turn (reading the newest messages that fit
//! the token budget and fitting them), at 10, 1,000 and 10,000 messages.

use std::hint::black_box;

use bitselect_bench::history_fill::fill_session;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ragent::history;
use ragent::llm::ChatMessage;
use ragent::store::Store;
use ragent::store::messages::{self, NewMessage, Role};

const SIZES: [usize; 3] = [10, 1_000, 10_000];
/// The default history budget in tokens.
const BUDGET: usize = 24_000;

fn append(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.db");
    let session = fill_session(&path, 10, 0).unwrap();
    let store = Store::open(&path).unwrap();
    let mut group = c.benchmark_group("store");
    group.throughput(Throughput::Elements(1));
    group.bench_function("append_message", |b| {
        b.iter(|| {
            store
                .with_conn(|conn| {
                    messages::append(
                        conn,
                        &NewMessage {
                            session_id: &session,
                            run_id: Some("bench"),
                            role: Role::User,
                            content: "iPhone 17 现在多少钱，有货吗？",
                            tool_calls: &[],
                            tool_call_id: None,
                            call_id: None,
                        },
                        1,
                    )
                })
                .unwrap()
        })
    });
    group.finish();
}

fn load(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.db");
    let sessions: Vec<(usize, String)> = SIZES
        .iter()
        .map(|&n| (n, fill_session(&path, n, 0).unwrap()))
        .collect();
    let store = Store::open(&path).unwrap();
    let mut group = c.benchmark_group("store_load");
    for (n, session) in &sessions {
        group.throughput(Throughput::Elements(*n as u64));
        group.bench_with_input(BenchmarkId::new("messages", n), session, |b, session| {
            b.iter(|| {
                store
                    .with_conn(|conn| messages::list(conn, black_box(session)))
                    .unwrap()
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("model_history");
    let system = ChatMessage::System {
        content: ragent::instructions::system_prompt().to_string(),
    };
    for (n, session) in &sessions {
        group.bench_with_input(
            BenchmarkId::new("tail_and_fit", n),
            session,
            |b, session| {
                b.iter(|| {
                    let mut window = history::Window::new(BUDGET);
                    store
                        .with_conn(|conn| {
                            messages::visit_newest_first(conn, session, |m| window.take_older(m))
                        })
                        .unwrap();
                    history::fit(system.clone(), window.conversation(), BUDGET)
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, append, load);
criterion_main!(benches);
