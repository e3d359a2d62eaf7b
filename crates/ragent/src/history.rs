//! What of the stored conversation is sent to the model. The store keeps
//! everything; the request keeps the system prompt, the latest user turn
//! and as many earlier turns as fit the budget, dropping the oldest first.
//! An assistant message with tool calls and its tool results go or stay
//! together: an API refuses a call without its result.

use std::borrow::Borrow;
use std::collections::VecDeque;
use std::sync::Arc;

use crate::llm::ChatMessage;
use crate::store::messages::{MessageRecord, Role};

/// A cheap token estimate: CJK characters are about one token each,
/// other text about four characters a token.
pub fn estimate_tokens(text: &str) -> usize {
    let (cjk, other) = text.chars().fold((0usize, 0usize), |(cjk, other), c| {
        if is_cjk(c) {
            (cjk + 1, other)
        } else {
            (cjk, other + 1)
        }
    });
    cjk + other.div_ceil(4)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F      // CJK punctuation
        | 0x3040..=0x30FF    // kana
        | 0x3400..=0x4DBF    // extension A
        | 0x4E00..=0x9FFF    // unified ideographs
        | 0xAC00..=0xD7AF    // hangul
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0xFF00..=0xFFEF    // full-width forms
        | 0x20000..=0x2FA1F) // extensions B and later
}

/// Per-message overhead of the chat format (role, separators).
const MESSAGE_OVERHEAD: usize = 4;

pub fn message_tokens(message: &ChatMessage) -> usize {
    MESSAGE_OVERHEAD
        + match message {
            ChatMessage::System { content } | ChatMessage::User { content } => {
                estimate_tokens(content)
            }
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => {
                estimate_tokens(content)
                    + tool_calls
                        .iter()
                        .map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments) + 4)
                        .sum::<usize>()
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => estimate_tokens(tool_call_id) + estimate_tokens(content),
        }
}

/// A message with its estimated tokens.
pub type Counted<M> = (M, usize);

fn message<M: Borrow<ChatMessage>>(counted: &Counted<M>) -> &ChatMessage {
    counted.0.borrow()
}

/// A run of messages that must travel together: a user message, an
/// answer, or an assistant message with tool calls and their results.
struct Group {
    starts_turn: bool,
    /// Whether it can be sent: a call with all its results, not a result
    /// without its call.
    complete: bool,
    tokens: usize,
}

/// How a conversation's messages group. A result joins the latest call
/// that waits for it, even when it was stored after a later message (a
/// batch finished after its run died), so a call and its result are
/// never apart. Indices, not copies: a request is grouped on every turn.
struct Grouping {
    /// Per message, the index of its group.
    group_of: Vec<usize>,
    groups: Vec<Group>,
}

impl Grouping {
    fn of<M: Borrow<ChatMessage>>(conversation: &[Counted<M>]) -> Grouping {
        let mut group_of = Vec::with_capacity(conversation.len());
        let mut groups: Vec<Group> = Vec::new();
        // Calls still waiting for their result, each id once per group,
        // with the group that made them; few at a time.
        let mut waiting: Vec<(&str, usize)> = Vec::new();
        for counted in conversation {
            let tokens = counted.1;
            let message = message(counted);
            if let ChatMessage::Tool { tool_call_id, .. } = message
                && let Some(at) = waiting.iter().rposition(|(id, _)| id == tool_call_id)
            {
                let (_, group) = waiting.remove(at);
                groups[group].tokens += tokens;
                group_of.push(group);
                continue;
            }
            let index = groups.len();
            if let ChatMessage::Assistant { tool_calls, .. } = message {
                let own = waiting.len();
                for call in tool_calls {
                    if !waiting[own..].iter().any(|(id, _)| *id == call.id) {
                        waiting.push((&call.id, index));
                    }
                }
            }
            // A result here waits for no call; a call is complete once
            // its results have all joined (checked at the end).
            let complete = !matches!(message, ChatMessage::Tool { .. });
            groups.push(Group {
                starts_turn: matches!(message, ChatMessage::User { .. }),
                complete,
                tokens,
            });
            group_of.push(index);
        }
        // A call without its result (or a result without its call) cannot
        // be sent; the store never leaves one behind, but a request must
        // not fail for it.
        for &(_, group) in &waiting {
            groups[group].complete = false;
        }
        for _ in groups.iter().filter(|group| !group.complete) {
            tracing::warn!("left out of the request: tool calls and results that do not match");
        }
        Grouping { group_of, groups }
    }

    /// Conversation turns, a user message and everything that answers it,
    /// as (first group, tokens), of the groups that can be sent.
    fn turns(&self) -> Vec<(usize, usize)> {
        let mut turns: Vec<(usize, usize)> = Vec::new();
        for (index, group) in self.groups.iter().enumerate() {
            if !group.complete {
                continue;
            }
            match turns.last_mut() {
                Some((_, tokens)) if !group.starts_turn => *tokens += group.tokens,
                _ => turns.push((index, group.tokens)),
            }
        }
        turns
    }

    /// Appends to `out` the messages of the groups from `first_group` on
    /// that can be sent, each group's together, groups in order.
    fn send_from<M>(&self, conversation: Vec<Counted<M>>, first_group: usize, out: &mut Vec<M>) {
        let kept = |group: usize| group >= first_group && self.groups[group].complete;
        let tagged = self.group_of.iter().copied().zip(conversation);
        if self.group_of.is_sorted() {
            out.extend(
                tagged
                    .filter(|(group, _)| kept(*group))
                    .map(|(_, (message, _))| message),
            );
        } else {
            // A late result moves back to its call; a stable sort keeps
            // each group's own order.
            let mut moved: Vec<_> = tagged.filter(|(group, _)| kept(*group)).collect();
            moved.sort_by_key(|(group, _)| *group);
            out.extend(moved.into_iter().map(|(_, (message, _))| message));
        }
    }
}

/// The messages to send: `system` first, then the newest whole turns that
/// fit `budget` estimated tokens. The latest turn (the latest user message
/// and everything after it) is always kept, even over budget. (The run
/// fits counted messages, [`fit_and_count`]; this is for the benchmarks.)
#[cfg(any(test, feature = "internals"))]
pub fn fit(system: ChatMessage, conversation: Vec<ChatMessage>, budget: usize) -> Vec<ChatMessage> {
    let counted = conversation
        .into_iter()
        .map(|m| {
            let tokens = message_tokens(&m);
            (m, tokens)
        })
        .collect();
    fit_counted(system, counted, budget)
}

/// As [`fit`], for messages whose tokens were counted when they were read.
#[cfg(any(test, feature = "internals"))]
pub fn fit_counted<M: Borrow<ChatMessage>>(
    system: M,
    conversation: Vec<Counted<M>>,
    budget: usize,
) -> Vec<M> {
    fit_and_count(system, conversation, budget).0
}

/// As [`fit_counted`], with the estimated tokens of what is sent.
pub fn fit_and_count<M: Borrow<ChatMessage>>(
    system: M,
    conversation: Vec<Counted<M>>,
    budget: usize,
) -> (Vec<M>, usize) {
    let grouping = Grouping::of(&conversation);
    let turns = grouping.turns();
    let latest = turns.len().saturating_sub(1);
    let mut used =
        message_tokens(system.borrow()) + turns.get(latest).map_or(0, |&(_, tokens)| tokens);
    let mut first_kept = latest;
    for index in (0..latest).rev() {
        let turn_tokens = turns[index].1;
        if used + turn_tokens > budget {
            break;
        }
        used += turn_tokens;
        first_kept = index;
    }
    let first_group = turns.get(first_kept).map_or(0, |&(group, _)| group);
    let mut out = Vec::with_capacity(conversation.len() + 1);
    out.push(system);
    grouping.send_from(conversation, first_group, &mut out);
    (out, used)
}

/// The largest factor by which a provider's count may shrink the budget.
const MAX_CORRECTION: usize = 8;

/// A budget in estimated tokens, corrected by how the provider counted a
/// session's last request: `counted` tokens where the estimate said
/// `estimated`. Where the provider counts more (another tokenizer, tool
/// definitions written out in its own template), the next request is
/// fitted to the budget shrunk by that factor, so what is sent fits the
/// budget as the provider counts it. The factor is taken in steps of an
/// eighth, rounded up, so a session's budget does not move with every
/// small change of the ratio (a raised budget means reading the window
/// again), and at most [`MAX_CORRECTION`]. A provider that counts fewer
/// leaves the budget as set: the estimate errs on the side of sending less.
pub fn corrected_budget(budget: usize, estimated: usize, counted: u64) -> usize {
    let counted = usize::try_from(counted).unwrap_or(usize::MAX);
    if estimated == 0 || counted <= estimated {
        return budget;
    }
    let eighths = counted
        .saturating_mul(8)
        .div_ceil(estimated)
        .min(8 * MAX_CORRECTION);
    budget.saturating_mul(8) / eighths
}

/// A stored message as the model reads it; notices are for the user alone.
pub fn chat_message(record: MessageRecord) -> Option<ChatMessage> {
    match record.role {
        Role::User => Some(ChatMessage::User {
            content: record.content,
        }),
        Role::Assistant => Some(ChatMessage::Assistant {
            content: record.content,
            tool_calls: record.tool_calls,
        }),
        Role::Tool => Some(ChatMessage::Tool {
            tool_call_id: record.tool_call_id.unwrap_or_default(),
            content: record.content,
        }),
        Role::Notice => None,
    }
}

/// The newest part of a stored conversation that [`fit`] can use. Filled
/// from the newest message back ([`Window::take_older`]), so a first turn
/// costs the budget and not the whole history; then kept between turns:
/// messages are append-only, so a later turn adds only what was stored
/// since ([`Window::take_newer`]) and drops the oldest turns that no longer
/// fit. It keeps everything back to the newest turn start where what it
/// holds is over the budget: `fit` never keeps a turn older than one that
/// does not fit, so `fit` on the window equals `fit` on all.
#[derive(Debug)]
pub struct Window {
    budget: usize,
    /// The newest stored message read, sent to the model or not.
    last_id: i64,
    /// Oldest first, each with its estimated tokens.
    entries: VecDeque<Counted<Arc<ChatMessage>>>,
    used: usize,
}

impl Window {
    pub fn new(budget: usize) -> Window {
        Window {
            budget,
            last_id: 0,
            entries: VecDeque::new(),
            used: 0,
        }
    }

    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The id of the newest stored message read.
    pub fn last_id(&self) -> i64 {
        self.last_id
    }

    /// Takes the next older stored message; returns whether older ones
    /// may still be sent.
    pub fn take_older(&mut self, record: MessageRecord) -> bool {
        self.last_id = self.last_id.max(record.id);
        match chat_message(record) {
            Some(message) => self.push_older(message),
            None => true,
        }
    }

    fn push_older(&mut self, message: ChatMessage) -> bool {
        let tokens = message_tokens(&message);
        self.used += tokens;
        let starts_turn = matches!(message, ChatMessage::User { .. });
        self.entries.push_front((Arc::new(message), tokens));
        !(starts_turn && self.used > self.budget)
    }

    /// Takes a message stored after every one read so far.
    pub fn take_newer(&mut self, record: MessageRecord) {
        self.last_id = self.last_id.max(record.id);
        if let Some(message) = chat_message(record) {
            self.push_newer(message);
        }
    }

    fn push_newer(&mut self, message: ChatMessage) {
        let tokens = message_tokens(&message);
        self.push_counted((Arc::new(message), tokens));
    }

    fn push_counted(&mut self, counted: Counted<Arc<ChatMessage>>) {
        self.used += counted.1;
        self.entries.push_back(counted);
        self.trim();
    }

    /// Takes messages a run stored itself, as the run held them, if they
    /// are all that was stored after what the window has read: `after` is
    /// the newest message stored before them, `last_id` the last of them.
    /// Returns whether it took them; if not, a later read takes them from
    /// the store.
    pub fn take_stored(
        &mut self,
        after: i64,
        last_id: i64,
        messages: &[Counted<Arc<ChatMessage>>],
    ) -> bool {
        if self.last_id != after {
            return false;
        }
        for counted in messages {
            self.push_counted(counted.clone());
        }
        self.last_id = last_id;
        true
    }

    /// Lowers the budget (a raised one needs a fresh read: older messages
    /// were let go).
    pub fn narrow(&mut self, budget: usize) {
        self.budget = self.budget.min(budget);
        self.trim();
    }

    /// Lets go of everything older than the newest turn start where the
    /// window is over the budget. Looked for from the oldest: only the
    /// oldest turns are over it, and the window is searched on every push.
    fn trim(&mut self) {
        let mut from_here = self.used;
        let mut cut = 0;
        for (index, (message, tokens)) in self.entries.iter().enumerate() {
            if from_here <= self.budget {
                break;
            }
            if matches!(**message, ChatMessage::User { .. }) {
                cut = index;
            }
            from_here -= tokens;
        }
        for (_, tokens) in self.entries.drain(..cut) {
            self.used -= tokens;
        }
    }

    /// What the window holds, oldest first, with each message's tokens.
    /// The messages are shared, not copied.
    pub fn counted(&self) -> Vec<Counted<Arc<ChatMessage>>> {
        self.entries.iter().cloned().collect()
    }

    /// What the window holds, oldest first.
    #[cfg(any(test, feature = "internals"))]
    pub fn conversation(&self) -> Vec<ChatMessage> {
        self.entries
            .iter()
            .map(|(message, _)| ChatMessage::clone(message))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::llm::ToolCallRequest;

    fn user(text: &str) -> ChatMessage {
        ChatMessage::User {
            content: text.into(),
        }
    }

    fn assistant(text: &str) -> ChatMessage {
        ChatMessage::Assistant {
            content: text.into(),
            tool_calls: vec![],
        }
    }

    fn calls(ids: &[&str]) -> ChatMessage {
        ChatMessage::Assistant {
            content: String::new(),
            tool_calls: ids
                .iter()
                .map(|id| ToolCallRequest {
                    id: id.to_string(),
                    name: "shop__query_cart".into(),
                    arguments: "{}".into(),
                })
                .collect(),
        }
    }

    fn result(id: &str, text: &str) -> ChatMessage {
        ChatMessage::Tool {
            tool_call_id: id.into(),
            content: text.into(),
        }
    }

    fn system() -> ChatMessage {
        ChatMessage::System {
            content: "sys".into(),
        }
    }

    #[test]
    fn cjk_counts_about_a_token_a_character() {
        assert_eq!(estimate_tokens("比特严选"), 4);
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens("iPhone 17，黑色"), 3 + 3);
        assert_eq!(estimate_tokens(""), 0);
    }

    #[test]
    fn a_provider_counting_more_than_the_estimate_shrinks_the_budget() {
        // Counted as estimated, or fewer: the budget as set.
        assert_eq!(corrected_budget(1_000, 400, 400), 1_000);
        assert_eq!(corrected_budget(1_000, 400, 100), 1_000);
        assert_eq!(corrected_budget(1_000, 0, 100), 1_000);
        // Twice the estimate: half the budget.
        assert_eq!(corrected_budget(1_000, 400, 800), 500);
        // A little over: the next eighth up, so small changes do not move it.
        assert_eq!(corrected_budget(1_000, 400, 410), 888);
        assert_eq!(corrected_budget(1_000, 400, 440), 888);
        // Far over: at most an eighth of the budget.
        assert_eq!(corrected_budget(1_000, 400, 1_000_000), 125);
    }

    #[test]
    fn fitting_counts_what_it_sends() {
        let counted = || {
            [user("a"), assistant("bb"), user("c")]
                .into_iter()
                .map(|m| (m, 10))
                .collect()
        };
        let system_tokens = message_tokens(&system());
        let (sent, tokens) = fit_and_count(system(), counted(), system_tokens + 29);
        assert_eq!(sent, vec![system(), user("c")]);
        assert_eq!(tokens, system_tokens + 10);
        let (sent, tokens) = fit_and_count(system(), counted(), system_tokens + 30);
        assert_eq!(sent.len(), 4);
        assert_eq!(tokens, system_tokens + 30);
    }

    #[test]
    fn everything_is_sent_when_it_fits() {
        let conversation = vec![user("a"), assistant("b"), user("c")];
        let sent = fit(system(), conversation.clone(), 10_000);
        assert_eq!(sent[0], system());
        assert_eq!(&sent[1..], &conversation[..]);
    }

    #[test]
    fn reading_only_the_tail_sends_the_same_as_reading_everything() {
        let long = "长".repeat(60);
        let mut conversation = Vec::new();
        for turn in 0..40 {
            conversation.push(user(&format!("{turn} {long}")));
            let id = format!("c{turn}");
            conversation.push(calls(&[id.as_str()]));
            conversation.push(result(&id, &long));
            conversation.push(assistant(&long));
        }
        // A late result: stored after a later message, it joins its call.
        conversation.push(user("late"));
        conversation.push(calls(&["x1"]));
        conversation.push(user("again"));
        conversation.push(result("x1", "done"));
        for budget in [0, 50, 300, 1_000, 5_000, 100_000] {
            let mut window = Window::new(budget);
            for message in conversation.iter().rev() {
                if !window.push_older(message.clone()) {
                    break;
                }
            }
            let read = window.conversation();
            assert_eq!(
                fit(system(), read, budget),
                fit(system(), conversation.clone(), budget),
                "budget {budget}"
            );
        }
    }

    #[test]
    fn a_window_kept_between_turns_sends_what_a_fresh_read_sends() {
        let long = "长".repeat(60);
        let mut conversation = Vec::new();
        for turn in 0..12 {
            conversation.push(user(&format!("{turn} {long}")));
            for call in 0..3 {
                let id = format!("c{turn}-{call}");
                conversation.push(calls(&[id.as_str()]));
                conversation.push(result(&id, &long));
            }
            conversation.push(assistant(&long));
        }
        for budget in [0, 100, 700, 2_000, 100_000] {
            let mut kept = Window::new(budget);
            for (stored, message) in conversation.iter().enumerate() {
                kept.push_newer(message.clone());
                let mut fresh = Window::new(budget);
                for older in conversation[..=stored].iter().rev() {
                    if !fresh.push_older(older.clone()) {
                        break;
                    }
                }
                assert_eq!(
                    fit(system(), kept.conversation(), budget),
                    fit(system(), fresh.conversation(), budget),
                    "budget {budget}, {} messages stored",
                    stored + 1
                );
                assert_eq!(
                    kept.conversation(),
                    fresh.conversation(),
                    "the kept window holds what a fresh read takes"
                );
            }
        }
    }

    #[test]
    fn a_window_that_takes_a_turn_as_held_holds_what_reading_it_would() {
        let long = "长".repeat(60);
        let counted = |message: ChatMessage| {
            let tokens = message_tokens(&message);
            (Arc::new(message), tokens)
        };
        let mut taking = Window::new(700);
        let mut reading = Window::new(700);
        let mut last_id = 0;
        for turn in 0..12 {
            let id = format!("c{turn}");
            let held = vec![counted(calls(&[id.as_str()])), counted(result(&id, &long))];
            // Stored as ids last_id + 1 and + 2.
            assert!(taking.take_stored(last_id, last_id + 2, &held));
            for (message, _) in &held {
                reading.push_newer(ChatMessage::clone(message));
            }
            last_id += 2;
            assert_eq!(taking.last_id(), last_id);
            assert_eq!(taking.conversation(), reading.conversation(), "turn {turn}");
            assert_eq!(taking.used, reading.used);
        }
        // Something else was stored after what the window read: it takes
        // nothing, and reads it all later.
        let held = vec![counted(assistant("晚到"))];
        assert!(!taking.take_stored(last_id + 1, last_id + 2, &held));
        assert_eq!(taking.last_id(), last_id);
        assert_eq!(taking.conversation(), reading.conversation());
    }

    #[test]
    fn a_narrowed_window_sends_what_a_window_of_that_budget_sends() {
        let long = "长".repeat(60);
        let mut wide = Window::new(5_000);
        let mut narrow = Window::new(300);
        for turn in 0..20 {
            for message in [user(&format!("{turn} {long}")), assistant(&long)] {
                wide.push_newer(message.clone());
                narrow.push_newer(message);
            }
        }
        wide.narrow(300);
        assert_eq!(wide.budget(), 300);
        assert_eq!(wide.conversation(), narrow.conversation());
    }

    #[test]
    fn the_oldest_turns_go_first_and_the_latest_user_turn_stays() {
        let long = "长".repeat(100);
        let conversation = vec![
            user(&long),
            assistant(&long),
            user("second"),
            assistant("ok"),
            user(&long),
        ];
        // Room for the system prompt, the last user turn and a little more.
        let budget = message_tokens(&system()) + message_tokens(&user(&long)) + 20;
        let sent = fit(system(), conversation, budget);
        assert_eq!(
            sent,
            vec![system(), user("second"), assistant("ok"), user(&long)]
        );
        // Over budget, the latest user turn is still sent.
        let sent = fit(system(), vec![user(&long), user(&long)], 10);
        assert_eq!(sent, vec![system(), user(&long)]);
    }

    #[test]
    fn a_turn_with_calls_goes_whole_and_newer_turns_are_kept_first() {
        let big = "结果".repeat(200);
        let conversation = vec![
            user("你好"),
            assistant("您好"),
            user("查购物车"),
            calls(&["c1", "c2"]),
            result("c1", &big),
            result("c2", "[]"),
            assistant("购物车是空的"),
            user("谢谢"),
        ];
        let small = [user("你好"), assistant("您好"), user("谢谢")];
        let budget =
            message_tokens(&system()) + small.iter().map(message_tokens).sum::<usize>() + 30;
        let sent = fit(system(), conversation.clone(), budget);
        // The turn with the big result does not fit: it goes whole, calls,
        // results and answer together, and the older turn cannot be kept
        // past the gap.
        assert_eq!(sent, vec![system(), user("谢谢")]);

        let sent = fit(system(), conversation.clone(), 100_000);
        assert_eq!(&sent[1..], &conversation[..]);
    }

    #[test]
    fn the_running_turn_keeps_its_calls_even_over_budget() {
        let big = "结果".repeat(500);
        let conversation = vec![
            user("old"),
            user("查购物车"),
            calls(&["c1"]),
            result("c1", &big),
        ];
        let sent = fit(system(), conversation, 50);
        assert_eq!(
            sent,
            vec![
                system(),
                user("查购物车"),
                calls(&["c1"]),
                result("c1", &big)
            ]
        );
    }

    #[test]
    fn a_result_stored_after_a_later_message_still_follows_its_call() {
        let conversation = vec![user("a"), calls(&["c1"]), user("b"), result("c1", "x")];
        let sent = fit(system(), conversation, 10_000);
        assert_eq!(
            sent,
            vec![
                system(),
                user("a"),
                calls(&["c1"]),
                result("c1", "x"),
                user("b")
            ]
        );
        // Models that reuse ids: each result goes to the latest call waiting.
        let conversation = vec![
            user("a"),
            calls(&["call_0"]),
            result("call_0", "first"),
            user("b"),
            calls(&["call_0"]),
            result("call_0", "second"),
        ];
        let sent = fit(system(), conversation.clone(), 10_000);
        assert_eq!(&sent[1..], &conversation[..]);
    }

    #[test]
    fn a_call_without_its_result_is_never_sent() {
        let conversation = vec![
            user("a"),
            calls(&["c1", "c2"]),
            result("c1", "x"),
            user("b"),
        ];
        let sent = fit(system(), conversation, 10_000);
        assert_eq!(sent, vec![system(), user("a"), user("b")]);
        // Nor a result without its call, nor a second result for one call.
        let conversation = vec![
            user("a"),
            result("c0", "orphan"),
            calls(&["c1"]),
            result("c1", "x"),
            result("c1", "again"),
        ];
        let sent = fit(system(), conversation, 10_000);
        assert_eq!(&sent[1..], &[user("a"), calls(&["c1"]), result("c1", "x")]);
    }
}
