//! A tool call's life as one state machine. The store moves a call only
//! through [`CallStatus::transition`] (`store::calls::move_call`), inside
//! the caller's transaction, which may hold several moves; nothing else
//! writes a status.
//!
//! ```text
//! proposed -> asking  -> approved -> running -> succeeded | failed | interrupted
//! running  -> awaiting_input -> running     (the server asked the user for input;
//!                                            the answer is sent with the call again)
//! awaiting_input -> expired | superseded    (not answered in time, or the user
//!                                            wrote a new message instead)
//! proposed -> allowed -> running
//! proposed -> rejected                      (unknown tool, bad arguments, policy deny)
//! asking   -> denied | expired | superseded
//! allowed | approved -> expired | superseded (waited in a batch that never ran)
//! allowed | approved -> asking | rejected   (judged again before the batch ran:
//!                                            the settings or trust changed, or
//!                                            a failed run left it unsent)
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a tool call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The model proposed it; the policy has not been applied yet.
    Proposed,
    /// Waiting for the user's decision on a card.
    Asking,
    /// The policy lets it run without a card.
    Allowed,
    /// The user approved it (possibly with edited arguments).
    Approved,
    /// Refused by code: unknown tool, arguments that are not valid, or a
    /// per-tool deny setting (also one set while the call waited).
    Rejected,
    /// Sent to its server; no result stored yet.
    Running,
    Succeeded,
    /// The server answered with an error, or could not be reached.
    Failed,
    /// The user declined it on the card.
    Denied,
    /// The card was not answered in time.
    Expired,
    /// The user wrote a new message instead of deciding.
    Superseded,
    /// The app stopped while it ran and the outcome is unknown.
    Interrupted,
    /// Its server answered that it needs the user's input first (an MCP
    /// `input_required` result); the request is stored with the call.
    AwaitingInput,
}

/// A move the state machine refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a tool call cannot go from {from} to {to}")]
pub struct IllegalTransition {
    pub from: CallStatus,
    pub to: CallStatus,
}

impl CallStatus {
    /// Every status, for tests and for parsing.
    pub const ALL: [CallStatus; 13] = [
        CallStatus::Proposed,
        CallStatus::Asking,
        CallStatus::Allowed,
        CallStatus::Approved,
        CallStatus::Rejected,
        CallStatus::Running,
        CallStatus::Succeeded,
        CallStatus::Failed,
        CallStatus::Denied,
        CallStatus::Expired,
        CallStatus::Superseded,
        CallStatus::Interrupted,
        CallStatus::AwaitingInput,
    ];

    /// The one place that says which moves are legal.
    pub fn transition(self, to: CallStatus) -> Result<CallStatus, IllegalTransition> {
        use CallStatus::*;
        let legal = matches!(
            (self, to),
            (Proposed, Asking | Allowed | Rejected)
                | (Asking, Approved | Denied | Expired | Superseded)
                | (
                    Allowed | Approved,
                    Running | Expired | Superseded | Asking | Rejected
                )
                | (Running, Succeeded | Failed | Interrupted | AwaitingInput)
                | (AwaitingInput, Running | Expired | Superseded)
        );
        if legal {
            Ok(to)
        } else {
            Err(IllegalTransition { from: self, to })
        }
    }

    /// No move leads out of this status.
    pub fn is_final(self) -> bool {
        CallStatus::ALL
            .iter()
            .all(|&to| self.transition(to).is_err())
    }

    /// The call went out to its server (or may have: `running`), so
    /// whatever it does may be done.
    pub fn was_sent(self) -> bool {
        matches!(
            self,
            CallStatus::Running
                | CallStatus::Succeeded
                | CallStatus::Failed
                | CallStatus::Interrupted
                | CallStatus::AwaitingInput
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Proposed => "proposed",
            CallStatus::Asking => "asking",
            CallStatus::Allowed => "allowed",
            CallStatus::Approved => "approved",
            CallStatus::Rejected => "rejected",
            CallStatus::Running => "running",
            CallStatus::Succeeded => "succeeded",
            CallStatus::Failed => "failed",
            CallStatus::Denied => "denied",
            CallStatus::Expired => "expired",
            CallStatus::Superseded => "superseded",
            CallStatus::Interrupted => "interrupted",
            CallStatus::AwaitingInput => "awaiting_input",
        }
    }
}

impl fmt::Display for CallStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status text that names no status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool call status {0:?}")]
pub struct UnknownStatus(pub String);

impl FromStr for CallStatus {
    type Err = UnknownStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CallStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| UnknownStatus(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::CallStatus::{self, *};

    /// Every legal move, written out as the design states them.
    const LEGAL: &[(CallStatus, CallStatus)] = &[
        (Proposed, Asking),
        (Proposed, Allowed),
        (Proposed, Rejected),
        (Asking, Approved),
        (Asking, Denied),
        (Asking, Expired),
        (Asking, Superseded),
        (Approved, Running),
        (Allowed, Running),
        (Approved, Expired),
        (Approved, Superseded),
        (Allowed, Expired),
        (Allowed, Superseded),
        (Allowed, Asking),
        (Approved, Asking),
        (Allowed, Rejected),
        (Approved, Rejected),
        (Running, Succeeded),
        (Running, Failed),
        (Running, Interrupted),
        (Running, AwaitingInput),
        (AwaitingInput, Running),
        (AwaitingInput, Expired),
        (AwaitingInput, Superseded),
    ];

    #[test]
    fn exactly_the_designed_moves_are_legal() {
        for from in CallStatus::ALL {
            for to in CallStatus::ALL {
                let expected = LEGAL.contains(&(from, to));
                assert_eq!(
                    from.transition(to).is_ok(),
                    expected,
                    "{from} -> {to} should be {}",
                    if expected { "legal" } else { "illegal" }
                );
            }
        }
    }

    #[test]
    fn a_decided_call_cannot_be_decided_again() {
        assert!(Approved.transition(Approved).is_err());
        assert!(Denied.transition(Approved).is_err());
        assert!(Approved.transition(Denied).is_err());
    }

    #[test]
    fn nothing_runs_without_approval_or_allowance() {
        assert!(Proposed.transition(Running).is_err());
        assert!(Asking.transition(Running).is_err());
        assert!(Denied.transition(Running).is_err());
        assert!(Superseded.transition(Running).is_err());
    }

    #[test]
    fn final_states_are_the_ends_of_a_life() {
        let finals: Vec<CallStatus> = CallStatus::ALL
            .into_iter()
            .filter(|s| s.is_final())
            .collect();
        assert_eq!(
            finals,
            vec![
                Rejected,
                Succeeded,
                Failed,
                Denied,
                Expired,
                Superseded,
                Interrupted
            ]
        );
    }

    #[test]
    fn statuses_round_trip_through_text() {
        for status in CallStatus::ALL {
            assert_eq!(status.as_str().parse::<CallStatus>(), Ok(status));
        }
        assert!("done".parse::<CallStatus>().is_err());
    }
}
