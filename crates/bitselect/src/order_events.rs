//! The changes of an order owed to the platform that placed it: when a
//! platform completes a checkout naming a webhook, the order is
//! subscribed and an event is owed for its placing and for each later
//! change (cancelled, sent elsewhere, an after-sale). The events are an
//! outbox in the shop's database, written in the same transaction as the
//! change itself, so none is owed for a change that did not commit and
//! none is lost with an instance; any instance sends them, one at a time
//! per order and oldest first, each leased to one sender while it tries.

use crate::clock::Millis;
use crate::error::Result;
use crate::store::{Conn, Row, params};
use crate::users::{UserConn, UserId};

/// How long a sender holds an event before another may try it.
pub const LEASE_MS: Millis = 30_000;

/// How many tries an event gets before it is given up.
pub const MAX_ATTEMPTS: i64 = 12;

/// The longest wait between two tries.
const MAX_BACKOFF_MS: Millis = 3_600_000;

/// Why an event is owed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The order was placed.
    Placed,
    /// The order changed since.
    Updated,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Placed => "placed",
            Self::Updated => "updated",
        }
    }
}

/// One event a sender has leased: what to send, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwedEvent {
    pub id: i64,
    pub order_no: String,
    pub kind: String,
    /// Whose order it is.
    pub user: UserId,
    /// The platform's webhook.
    pub url: String,
    /// The shop's origin the order was placed at (its permalink's, and
    /// its business profile's).
    pub origin: String,
    /// When the change happened.
    pub created_at: Millis,
    /// This try's number, from 1.
    pub attempt: i64,
}

/// What became of an event that was not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// It is tried again at this time.
    At(Millis),
    /// It had its last try.
    GivenUp,
}

/// Subscribes the user's order `order_no` to the platform's webhook `url`
/// and owes it the event of its placing.
pub fn subscribe(
    conn: &UserConn<'_>,
    now: Millis,
    order_no: &str,
    url: &str,
    origin: &str,
) -> Result<()> {
    conn.execute(
        "INSERT INTO order_webhook (order_no, user_id, url, origin, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![order_no, conn.user(), url, origin, now],
    )?;
    owe(conn, now, order_no, EventKind::Placed)?;
    Ok(())
}

/// Owes an event for a change of the user's order `order_no`, if a
/// platform is subscribed to it; says whether one is.
pub fn changed(conn: &UserConn<'_>, now: Millis, order_no: &str) -> Result<bool> {
    owe(conn, now, order_no, EventKind::Updated)
}

fn owe(conn: &UserConn<'_>, now: Millis, order_no: &str, kind: EventKind) -> Result<bool> {
    let owed = conn.execute(
        "INSERT INTO order_event (order_no, kind, created_at, next_at)
         SELECT order_no, ?3, ?4, ?4 FROM order_webhook WHERE order_no = ?1 AND user_id = ?2",
        params![order_no, conn.user(), kind.as_str(), now],
    )?;
    Ok(owed > 0)
}

/// Leases the oldest event due at `now` whose order has no older event
/// still owed, if any: no other sender takes it until the lease ends.
pub fn claim(conn: &dyn Conn, now: Millis) -> Result<Option<OwedEvent>> {
    let Some(mut event) = conn.query_opt(
        "SELECT e.id, e.order_no, e.kind, w.user_id, w.url, w.origin, e.created_at, e.attempts
         FROM order_event e JOIN order_webhook w ON w.order_no = e.order_no
         WHERE e.delivered_at IS NULL AND e.abandoned_at IS NULL AND e.next_at <= ?1
           AND (e.leased_until IS NULL OR e.leased_until <= ?1)
           AND NOT EXISTS (SELECT 1 FROM order_event older
                           WHERE older.order_no = e.order_no AND older.id < e.id
                             AND older.delivered_at IS NULL AND older.abandoned_at IS NULL)
         ORDER BY e.next_at, e.id
         LIMIT 1",
        params![now],
        read_event,
    )?
    else {
        return Ok(None);
    };
    let leased = conn.execute(
        "UPDATE order_event SET leased_until = ?2, attempts = attempts + 1
         WHERE id = ?1 AND delivered_at IS NULL
           AND (leased_until IS NULL OR leased_until <= ?3)",
        params![event.id, now + LEASE_MS, now],
    )?;
    if leased != 1 {
        return Ok(None);
    }
    event.attempt += 1;
    Ok(Some(event))
}

fn read_event(row: &Row<'_>) -> Result<OwedEvent> {
    Ok(OwedEvent {
        id: row.get(0)?,
        order_no: row.get(1)?,
        kind: row.get(2)?,
        user: row.get(3)?,
        url: row.get(4)?,
        origin: row.get(5)?,
        created_at: row.get(6)?,
        attempt: row.get(7)?,
    })
}

/// The event `id` reached the platform.
pub fn delivered(conn: &dyn Conn, now: Millis, id: i64) -> Result<()> {
    conn.execute(
        "UPDATE order_event SET delivered_at = ?2, leased_until = NULL, last_error = NULL
         WHERE id = ?1",
        params![id, now],
    )?;
    Ok(())
}

/// Try `attempt` of event `id` failed with `error`: it is tried again
/// after a wait that doubles with each try (2 s, 4 s, ... at most an
/// hour), or given up after [`MAX_ATTEMPTS`].
pub fn failed(conn: &dyn Conn, now: Millis, id: i64, attempt: i64, error: &str) -> Result<Retry> {
    if attempt >= MAX_ATTEMPTS {
        conn.execute(
            "UPDATE order_event SET abandoned_at = ?2, leased_until = NULL, last_error = ?3
             WHERE id = ?1",
            params![id, now, error],
        )?;
        return Ok(Retry::GivenUp);
    }
    let at = now + backoff(attempt);
    conn.execute(
        "UPDATE order_event SET next_at = ?2, leased_until = NULL, last_error = ?3 WHERE id = ?1",
        params![id, at, error],
    )?;
    Ok(Retry::At(at))
}

/// The wait after try `attempt` failed.
fn backoff(attempt: i64) -> Millis {
    let doublings = u32::try_from(attempt.clamp(1, 30)).unwrap_or(30);
    2_000_i64
        .saturating_mul(1_i64 << (doublings - 1))
        .min(MAX_BACKOFF_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failed_try_waits_twice_as_long_up_to_an_hour() {
        assert_eq!(backoff(1), 2_000);
        assert_eq!(backoff(2), 4_000);
        assert_eq!(backoff(5), 32_000);
        assert_eq!(backoff(11), 2_048_000);
        assert_eq!(backoff(12), MAX_BACKOFF_MS);
        assert_eq!(backoff(400), MAX_BACKOFF_MS);
    }
}
