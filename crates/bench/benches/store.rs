//! The core's store: appending a message, loading a session's messages,
//! and what a run does each turn (reading the newest messages that fit
//! the token budget and fitting them), at 10, 1,000 and 10,000 messages;
//! and what a full sync costs the commit of a write call's move.

use std::hint::black_box;

use bitselect_bench::history_fill::fill_session;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ragent::history;
use ragent::llm::ChatMessage;
use ragent::protocol::CallRisk;
use ragent::store::Store;
use ragent::store::calls::{self, BatchRecord, BatchState, CallUpdate, NewCall};
use ragent::store::messages::{self, NewMessage, Role};
use ragent::toolcall::CallStatus;

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

/// A write call stored `allowed` in a batch of its own, ready to move.
fn allowed_write(store: &Store, session: &str, n: usize) -> String {
    let id = format!("write-{n}");
    let batch = BatchRecord {
        reply_id: format!("{id}-batch"),
        session_id: session.to_string(),
        run_id: "bench".into(),
        assistant_message_id: 0,
        state: BatchState::Done,
        created_at: 0,
        expires_at: 0,
    };
    let call = NewCall {
        id: id.clone(),
        model_call_id: id.clone(),
        qualified_name: "shop__update_cart_item".into(),
        server: Some("shop".into()),
        tool: Some("update_cart_item".into()),
        title: None,
        description: None,
        proposed_arguments: "{}".into(),
        arguments: Some(serde_json::json!({})),
        schema: None,
        destructive: true,
        definition_changed: false,
        can_change: true,
        trusted: true,
        declares_read_only: false,
        risk: CallRisk::Undoable,
        preview_tool: None,
    };
    store
        .with_tx(|tx| {
            calls::insert_batch(tx, &batch, std::slice::from_ref(&call), 0)?;
            calls::move_call(
                tx,
                calls::get_call(tx, &id)?,
                CallStatus::Allowed,
                &CallUpdate::default(),
                0,
            )
        })
        .unwrap();
    id
}

/// The same statements (one call's row updated, one history row added)
/// committed with `synchronous = NORMAL` and with `FULL`: the move to
/// `running` before a write is sent, as it was and as it is now.
fn durable_move(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.db");
    let session = fill_session(&path, 10, 0).unwrap();
    let store = Store::open(&path).unwrap();
    let mut n = 0;
    let mut group = c.benchmark_group("write_call_move");
    group.throughput(Throughput::Elements(1));
    // NORMAL has no move to `running` (the store refuses it): the move to
    // `superseded` runs the same two statements.
    let cases: [(&str, bool, CallStatus); 2] = [
        ("commit_normal_sync", false, CallStatus::Superseded),
        ("commit_full_sync", true, CallStatus::Running),
    ];
    for (name, durable, to) in cases {
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    n += 1;
                    allowed_write(&store, &session, n)
                },
                |id| {
                    let step = |tx: &rusqlite::Connection| {
                        calls::move_call(
                            tx,
                            calls::get_call(tx, &id)?,
                            to,
                            &CallUpdate::default(),
                            1,
                        )
                    };
                    if durable {
                        store.with_durable_tx(step).unwrap()
                    } else {
                        store.with_tx(step).unwrap()
                    }
                },
                criterion::BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, append, load, durable_move);
criterion_main!(benches);
