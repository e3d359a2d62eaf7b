//! The loop of one run: ask the model, judge its calls, run them or stop
//! for a card, feed results back, until the model answers, a card waits,
//! the turn limit is reached, or the run is cancelled.

use std::collections::HashSet;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::agent::batch::{self, announce_moves};
use crate::agent::card;
use crate::agent::execute;
use crate::agent::inner::Inner;
use crate::agent::judge::{self, Approvals, expiry_ms};
use crate::agent::reads_first::{self, StoringTurn};
use crate::agent::recheck::{ask_again_if_moved, recheck_before_sending};
use crate::agent::recovery::{Leftover, RecoveryReport, settle_leftover};
use crate::agent::rejudge;
use crate::agent::sign_ins::SignInNews;
use crate::agent::start::Start;
use crate::agent::tools::{ToolIndex, listed_tools, tool_index};
use crate::agent::views::call_view;
use crate::error::AgentError;
use crate::history::{self, Counted};
use crate::llm::{ChatMessage, ChatRequest, LlmError, ToolSpec, TurnNews, turn};
use crate::protocol::{AgentEvent, ErrorInfo, StopReason};
use crate::store::StoreError;
use crate::store::calls::{self, BatchRecord, BatchState, CallRecord};
use crate::store::failures;
use crate::store::inputs;
use crate::store::messages::{self, NewMessage, Role};
use crate::toolcall::CallStatus;

enum Halt {
    Cancelled,
    Failed(AgentError),
}

impl<E: Into<AgentError>> From<E> for Halt {
    fn from(error: E) -> Self {
        Halt::Failed(error.into())
    }
}

struct Ctx<'a> {
    inner: &'a Arc<Inner>,
    session_id: &'a str,
    run_id: &'a str,
    cancel: &'a CancellationToken,
}

impl Ctx<'_> {
    fn emit(&self, event: AgentEvent) {
        self.inner.emit(self.session_id, Some(self.run_id), event);
    }
}

/// Runs to the end, frees the session's slot, then says why it stopped
/// (in that order, so a caller that sees the stop can start the next run).
pub(crate) async fn drive(
    inner: &Arc<Inner>,
    session_id: &str,
    run_id: &str,
    cancel: &CancellationToken,
    start: Start,
) {
    let ctx = Ctx {
        inner,
        session_id,
        run_id,
        cancel,
    };
    ctx.emit(AgentEvent::RunStarted);
    forget_last_failure(&ctx);
    let outcome = async {
        let tools = match start {
            Start::ResumeBatch { reply_id, tools } => {
                match execute_batch(&ctx, &reply_id, tools).await? {
                    Resumed::Ran { tools } => tools,
                    Resumed::AsksAgain => {
                        return Ok(StopReason::AwaitingConfirmation { reply_id });
                    }
                    Resumed::AwaitsInput { request_id } => {
                        return Ok(StopReason::AwaitingInput { request_id });
                    }
                }
            }
            Start::ResumeInput { call_id } => match resume_input(&ctx, &call_id).await? {
                Resumed::Ran { tools } => tools,
                Resumed::AsksAgain => {
                    let reply_id = ctx
                        .inner
                        .store
                        .with_conn(|c| calls::get_call(c, &call_id))?
                        .reply_id;
                    return Ok(StopReason::AwaitingConfirmation { reply_id });
                }
                Resumed::AwaitsInput { request_id } => {
                    return Ok(StopReason::AwaitingInput { request_id });
                }
            },
            Start::Fresh => {
                finish_leftover_batch(&ctx).await?;
                None
            }
        };
        model_loop(&ctx, tools).await
    }
    .await;
    let reason = match outcome {
        Ok(reason) => reason,
        Err(Halt::Cancelled) => StopReason::Cancelled,
        Err(Halt::Failed(error)) => {
            tracing::warn!(%error, session_id, run_id, "run failed");
            let info = error.info();
            keep_failure(&ctx, &info);
            ctx.emit(AgentEvent::Error { error: info });
            StopReason::Failed
        }
    };
    inner.release(session_id, run_id);
    ctx.emit(AgentEvent::RunStopped { reason });
}

/// A new run answers: the last one's failure is no longer what the
/// session shows. A store error here costs only a stale note (logged).
fn forget_last_failure(ctx: &Ctx<'_>) {
    if let Err(error) = ctx
        .inner
        .store
        .with_conn(|c| failures::clear(c, ctx.session_id))
    {
        tracing::warn!(%error, session_id = ctx.session_id, "the last failure could not be cleared");
    }
}

/// Keeps how the run failed, for a window opened later. The event is sent
/// either way: a store that fails here is what the error may be about.
fn keep_failure(ctx: &Ctx<'_>, info: &ErrorInfo) {
    let now = ctx.inner.now();
    if let Err(error) = ctx
        .inner
        .store
        .with_conn(|c| failures::record(c, ctx.session_id, ctx.run_id, info, now))
    {
        tracing::warn!(%error, session_id = ctx.session_id, "the failure could not be kept");
    }
}

async fn model_loop(ctx: &Ctx<'_>, tools: Option<ToolIndex>) -> Result<StopReason, Halt> {
    let mut storing = None;
    let outcome = turns(ctx, tools, &mut storing).await;
    // Nothing that follows the run may come before its last turn is stored.
    let stored = match storing {
        Some(turn) => turn.stored(&ctx.inner.windows).await,
        None => Ok(()),
    };
    match (outcome, stored) {
        (Ok(stop), Ok(())) => Ok(stop),
        (Ok(_), Err(error)) => Err(error.into()),
        (Err(halt), Err(error)) => {
            tracing::error!(%error, "the run's last turn of reads was not stored");
            Err(halt)
        }
        (Err(halt), Ok(())) => Err(halt),
    }
}

/// The run's turns. A turn of reads is stored while the next request goes
/// out (`storing`), and the run waits for it before it stores anything
/// else or reads the conversation again.
async fn turns(
    ctx: &Ctx<'_>,
    tools: Option<ToolIndex>,
    storing: &mut Option<StoringTurn>,
) -> Result<StopReason, Halt> {
    // Read once: a run works under the settings it started with.
    let settings = ctx.inner.settings();
    // Listed and checked against their pins once per run (or taken from
    // the batch the run began with): every turn of a run offers the same
    // tools, and a listing is a round trip to each server. A changed
    // definition is caught by the next run.
    let mut tools = match tools {
        Some(tools) => tools,
        None => tools_after_sign_ins(ctx).await?,
    };
    let offer = Offer::new(&tools).map_err(|e| LlmError::Encode(e.to_string()))?;
    // The next request, when it was built from a turn not stored yet.
    let mut next = None;
    for _ in 0..settings.max_turns_per_run {
        if ctx.cancel.is_cancelled() {
            return Err(Halt::Cancelled);
        }
        let (request, estimated) = match next.take() {
            Some(built) => built,
            None => build_request(ctx, &offer, settings.history_token_budget, &[])?,
        };
        let model = ctx.inner.model()?;
        let news = |news: TurnNews<'_>| match news {
            TurnNews::Text(text) => ctx.emit(AgentEvent::TextDelta {
                text: text.to_string(),
            }),
            TurnNews::Retrying(retrying) => ctx.emit(AgentEvent::ModelRetrying {
                attempt: retrying.attempt,
                retries: retrying.retries,
                delay_ms: u64::try_from(retrying.delay.as_millis()).unwrap_or(u64::MAX),
                kind: retrying.kind,
            }),
        };
        let mut answer = match model.complete(&request, &news, ctx.cancel).await {
            Ok(answer) => answer,
            Err(LlmError::Cancelled) => return Err(Halt::Cancelled),
            Err(error) => return Err(error.into()),
        };
        if let Some(usage) = answer.usage.filter(|u| u.prompt_tokens > 0) {
            ctx.inner
                .windows
                .note_count(ctx.session_id, estimated, usage.prompt_tokens);
        }
        // Ids unique on arrival: each call is stored, run and answered
        // under its own, so two calls the model gave one id both keep
        // their results.
        turn::unique_call_ids(&mut answer.tool_calls);
        if answer.text.is_empty() && answer.tool_calls.is_empty() {
            return Ok(StopReason::Completed);
        }
        let judged = (!answer.tool_calls.is_empty())
            .then(|| judge::judge(&ctx.inner.schemas, &settings, &answer.tool_calls, &tools));
        let judged = match judged {
            Some(judged) if judged.reads_only() => {
                let emit = |event: AgentEvent| ctx.emit(event);
                let read = reads_first::run(
                    ctx.inner,
                    ctx.session_id,
                    ctx.run_id,
                    &answer,
                    judged,
                    &emit,
                )
                .await?;
                if let Some(before) = storing.take() {
                    before.stored(&ctx.inner.windows).await?;
                }
                // Built before the turn is stored, from the conversation
                // stored so far and the turn as held.
                let held = read.messages();
                next = Some(build_request(
                    ctx,
                    &offer,
                    settings.history_token_budget,
                    &held,
                )?);
                *storing = Some(read.store(ctx.inner, held));
                continue;
            }
            other => other,
        };
        if let Some(before) = storing.take() {
            before.stored(&ctx.inner.windows).await?;
        }
        let now = ctx.inner.now();
        // The message and its batch are stored together: a crash leaves
        // both or neither, never calls without their record.
        let (message_id, stored) = ctx.inner.store.with_tx(|tx| {
            let message_id = messages::append(
                tx,
                &NewMessage {
                    session_id: ctx.session_id,
                    run_id: Some(ctx.run_id),
                    role: Role::Assistant,
                    content: &answer.text,
                    tool_calls: &turn::sendable_calls(&answer.tool_calls),
                    tool_call_id: None,
                    call_id: None,
                },
                now,
            )?;
            let stored = judged
                .map(|judged| {
                    batch::record(tx, judged, ctx.session_id, ctx.run_id, message_id, now)
                })
                .transpose()?;
            Ok::<_, StoreError>((message_id, stored))
        })?;
        if !answer.text.is_empty() {
            ctx.emit(AgentEvent::AssistantMessage {
                message_id,
                text: answer.text.clone(),
            });
        }
        let Some(stored) = stored else {
            return Ok(StopReason::Completed);
        };
        for call in &stored.rejected {
            ctx.emit(AgentEvent::ToolCallFinished {
                call: call_view(call),
            });
        }
        if stored.needs_card {
            let reply_id = &stored.batch.reply_id;
            card::show(
                ctx.inner,
                ctx.session_id,
                Some(ctx.run_id),
                reply_id,
                Some(&tools),
            )
            .await?;
            return Ok(StopReason::AwaitingConfirmation {
                reply_id: stored.batch.reply_id,
            });
        }
        let mut listing = Listing(Some(tools));
        let ran = run_batch(ctx, &stored.batch, &stored.allowed, &mut listing).await?;
        tools = listing.0.unwrap_or_default();
        match ran {
            BatchRun::AwaitsInput { request_id } => {
                return Ok(StopReason::AwaitingInput { request_id });
            }
            BatchRun::AsksAgain => {
                return Ok(StopReason::AwaitingConfirmation {
                    reply_id: stored.batch.reply_id,
                });
            }
            BatchRun::Done => {}
        }
    }
    Ok(StopReason::MaxTurns {
        limit: settings.max_turns_per_run,
    })
}

/// How a decided batch went.
enum Resumed {
    /// It ran; the tools listed to judge it, if they were.
    Ran { tools: Option<ToolIndex> },
    /// A call asks again: its card is out and the run ends.
    AsksAgain,
    /// A call's server asks the user for input: its card is out and the
    /// run ends.
    AwaitsInput { request_id: String },
}

/// Sends the answered call again, then runs what is left of its batch.
async fn resume_input(ctx: &Ctx<'_>, call_id: &str) -> Result<Resumed, Halt> {
    let call = ctx.inner.store.with_conn(|c| calls::get_call(c, call_id))?;
    let emit = |event: AgentEvent| ctx.emit(event);
    let done = execute::resume(ctx.inner, &call, &emit).await?;
    if done.status == CallStatus::AwaitingInput {
        return Ok(Resumed::AwaitsInput {
            request_id: waiting_request(ctx, call_id)?,
        });
    }
    execute_batch(ctx, &call.reply_id, None).await
}

/// The id of the request `call_id` awaits.
fn waiting_request(ctx: &Ctx<'_>, call_id: &str) -> Result<String, Halt> {
    let record = ctx
        .inner
        .store
        .with_conn(|c| inputs::latest_of_call(c, call_id))?
        .ok_or_else(|| StoreError::NotFound(format!("input request of call {call_id}")))?;
    Ok(record.id)
}

/// Runs a stored batch whose card was decided, after judging its waiting
/// calls again under the settings and trust in force now. `tools`: the
/// listing the reply was checked against, if it was listed; the servers'
/// tools are listed here only when a call needs them and none was handed.
async fn execute_batch(
    ctx: &Ctx<'_>,
    reply_id: &str,
    tools: Option<ToolIndex>,
) -> Result<Resumed, Halt> {
    let settings = ctx.inner.settings();
    let (batch, waiting_allowed) = ctx.inner.store.with_conn(|c| {
        let batch = calls::get_batch(c, reply_id)?
            .ok_or_else(|| StoreError::NotFound(format!("batch {reply_id}")))?;
        let waiting_allowed = calls::calls_of_batch(c, reply_id)?
            .iter()
            .any(|call| call.status == CallStatus::Allowed);
        Ok::<_, StoreError>((batch, waiting_allowed))
    })?;
    let mut listing = Listing(tools);
    // Only a call allowed without a card needs the tool's facts again;
    // an approval needs only the settings.
    if waiting_allowed {
        listing.get(ctx).await?;
    }
    let now = ctx.inner.now();
    let expires_at = now.saturating_add(expiry_ms(&settings));
    let judged = ctx.inner.store.with_tx(|tx| {
        rejudge::rejudge(
            tx,
            &batch,
            listing.0.as_ref(),
            &settings,
            Approvals::Keep,
            expires_at,
            now,
        )
    })?;
    announce_moves(ctx.inner, ctx.session_id, Some(ctx.run_id), &judged.moved);
    if judged.asks {
        // A call that now asks after running without a card has no preview yet.
        card::show(
            ctx.inner,
            ctx.session_id,
            Some(ctx.run_id),
            reply_id,
            listing.0.as_ref(),
        )
        .await?;
        return Ok(Resumed::AsksAgain);
    }
    match run_batch(ctx, &batch, &judged.runnable, &mut listing).await? {
        BatchRun::AwaitsInput { request_id } => Ok(Resumed::AwaitsInput { request_id }),
        BatchRun::AsksAgain => Ok(Resumed::AsksAgain),
        BatchRun::Done => Ok(Resumed::Ran { tools: listing.0 }),
    }
}

/// The tools a batch runs under: the listing handed to it, or one listed
/// when first needed, never twice.
struct Listing(Option<ToolIndex>);

impl Listing {
    async fn get(&mut self, ctx: &Ctx<'_>) -> Result<&ToolIndex, Halt> {
        Ok(match self.0.take() {
            Some(tools) => self.0.insert(tools),
            None => self
                .0
                .insert(tool_index(ctx.inner, &|event| ctx.emit(event)).await?),
        })
    }
}

/// How running a batch went.
enum BatchRun {
    /// Every call ended and the batch is closed.
    Done,
    /// A call's server asked the user for input: the calls after it wait
    /// with the batch.
    AwaitsInput { request_id: String },
    /// A call that moves money would now do something else than its card
    /// showed, since an earlier call of the card ran: it asks again, and
    /// the calls after it wait with the batch.
    AsksAgain,
}

/// Runs a batch's allowed and approved calls in the model's order, then
/// closes it. A batch once started runs to its end even if the run is
/// cancelled, so no approved call is left half-decided.
async fn run_batch(
    ctx: &Ctx<'_>,
    batch: &BatchRecord,
    runnable: &[CallRecord],
    listing: &mut Listing,
) -> Result<BatchRun, Halt> {
    let emit = |event: AgentEvent| ctx.emit(event);
    let last = runnable.len().checked_sub(1);
    for (i, call) in runnable.iter().enumerate() {
        let recheck = ctx
            .inner
            .store
            .with_conn(|c| recheck_before_sending(c, call))?;
        if recheck {
            let expires_at = ctx
                .inner
                .now()
                .saturating_add(expiry_ms(&ctx.inner.settings()));
            let tools = listing.get(ctx).await?;
            if ask_again_if_moved(ctx.inner, tools, call, expires_at).await? {
                return Ok(BatchRun::AsksAgain);
            }
        }
        // The last call's ending and the batch's close are one transaction.
        let closing = (Some(i) == last).then_some(batch);
        let done = execute::execute(ctx.inner, call, &emit, closing).await?;
        if done.status == CallStatus::AwaitingInput {
            return Ok(BatchRun::AwaitsInput {
                request_id: waiting_request(ctx, &call.id)?,
            });
        }
    }
    if last.is_none() {
        let now = ctx.inner.now();
        ctx.inner
            .store
            .with_tx(|tx| batch::finalize(tx, batch, BatchState::Done, now))?;
    }
    Ok(BatchRun::Done)
}

/// A batch still `executing` with no run behind it (its run failed
/// halfway) is settled first, so its results reach the model in order:
/// calls left `running` are re-sent or marked interrupted, and calls not
/// yet sent are not sent now, behind the user's new message: they are
/// closed and the user and the model are told.
async fn finish_leftover_batch(ctx: &Ctx<'_>) -> Result<(), Halt> {
    let open = ctx
        .inner
        .store
        .with_conn(|c| calls::open_batch(c, ctx.session_id))?;
    if let Some(open) = open.filter(|b| b.state == BatchState::Executing) {
        let emit = |event: AgentEvent| ctx.emit(event);
        let mut report = RecoveryReport::default();
        settle_leftover(
            ctx.inner,
            &open,
            &emit,
            &mut report,
            Leftover::BeforeNewMessage,
        )
        .await?;
    }
    Ok(())
}

/// The tools a fresh run offers. A server that asks for a sign-in is
/// waited for until the user signs in (its tools are then offered) or
/// goes on without it; one the user already went on without is told of
/// and left out at once, as a server that failed to start is.
async fn tools_after_sign_ins(ctx: &Ctx<'_>) -> Result<ToolIndex, Halt> {
    let mut told = HashSet::new();
    loop {
        // Before listing: a sign-in that ends meanwhile is not missed.
        let mut news = ctx.inner.sign_ins.subscribe();
        let (tools, needs_sign_in) = listed_tools(ctx.inner, &|event| ctx.emit(event)).await?;
        let mut waiting = Vec::new();
        for server in needs_sign_in {
            let run_waits = ctx.inner.sign_ins.worth_waiting_for(&server);
            if told.insert(server.clone()) {
                ctx.emit(AgentEvent::SignInRequired {
                    server: server.clone(),
                    run_waits,
                });
            }
            if run_waits {
                waiting.push(server);
            }
        }
        if waiting.is_empty() {
            return Ok(tools);
        }
        loop {
            let received = tokio::select! {
                () = ctx.cancel.cancelled() => return Err(Halt::Cancelled),
                received = news.recv() => received,
            };
            match received {
                Ok(ended) if waiting.iter().any(|server| server == ended.server()) => {
                    ctx.emit(match ended {
                        SignInNews::SignedIn { server, identity } => AgentEvent::SignInEnded {
                            server,
                            identity: Some(identity),
                        },
                        SignInNews::WentWithout { server } => AgentEvent::SignInEnded {
                            server,
                            identity: None,
                        },
                    });
                    break;
                }
                Ok(_) => {}
                // News missed: the next listing tells where things stand.
                Err(_) => break,
            }
        }
    }
}

/// The tools a run offers the model, in the model's terms, and the part
/// of the token budget their definitions take. Built once per run.
struct Offer {
    specs: Arc<[ToolSpec]>,
    tokens: usize,
}

impl Offer {
    fn new(tools: &ToolIndex) -> Result<Offer, serde_json::Error> {
        let specs = tools
            .values()
            .map(|known| {
                let info = &known.info;
                let description = info
                    .description
                    .as_ref()
                    .or(info.title.as_ref())
                    .unwrap_or(&info.name);
                ToolSpec::new(&info.qualified_name, description, &info.input_schema)
            })
            .collect::<Result<Arc<[ToolSpec]>, _>>()?;
        let tokens = specs
            .iter()
            .map(|s| {
                history::estimate_tokens(&s.name)
                    + history::estimate_tokens(&s.description)
                    + history::estimate_tokens(s.parameters.get())
            })
            .sum();
        Ok(Offer { specs, tokens })
    }
}

/// The turn's request, and its estimated tokens: the conversation stored
/// so far, then `held`, the turn before it when it is not stored yet.
fn build_request(
    ctx: &Ctx<'_>,
    offer: &Offer,
    budget: u32,
    held: &[Counted<Arc<ChatMessage>>],
) -> Result<(ChatRequest, usize), Halt> {
    let budget = usize::try_from(budget).unwrap_or(usize::MAX);
    // Fitted as the provider counts, when it said how it counted the last.
    let budget = ctx
        .inner
        .windows
        .corrected_budget(ctx.session_id, budget)
        .saturating_sub(offer.tokens);
    // Only what was stored since the previous turn is read: a turn's cost
    // does not grow with the length of the session.
    let mut conversation =
        ctx.inner
            .windows
            .conversation(&ctx.inner.store, ctx.session_id, budget)?;
    conversation.extend_from_slice(held);
    let system = ctx.inner.windows.system();
    let (messages, tokens) = history::fit_and_count(system, conversation, budget);
    let request = ChatRequest {
        messages,
        tools: offer.specs.clone(),
    };
    Ok((request, tokens + offer.tokens))
}
