//! Users for load tests: `bitselect-mcp seed-users --count N` makes users
//! `load-00001` … `load-N`, each with a few cart lines and a coupon of their
//! own. Deterministic: the same catalogue and count give the same users,
//! lines and coupons (only the times follow the clock), and running it again
//! leaves existing users as they are.

use crate::store::{Conn, params};
use serde::Serialize;

use crate::catalog::ON_SALE;
use crate::clock::{DAY_MS, Millis};
use crate::error::{Result, ShopError};
use crate::money::Fen;
use crate::seed::{hand_out_coupon, put_in_cart};
use crate::users::{self, UserConn};

/// The most users one run makes.
pub const MAX_COUNT: u32 = 100_000;

/// Cart lines each user gets.
const LINES_PER_USER: usize = 3;

/// Each user's coupon: ¥50 off from ¥1,000, for 30 days.
const COUPON_THRESHOLD: Fen = 100_000;
const COUPON_OFF: Fen = 5_000;
const COUPON_DAYS: i64 = 30;

/// What a run made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeededUsers {
    /// Users made now.
    pub created: u32,
    /// Users of the range that were already there, left as they were.
    pub existing: u32,
}

/// The subject of load-test user `n` (from 1).
pub fn load_sub(n: u32) -> String {
    format!("load-{n:05}")
}

/// The code of load-test user `n`'s own coupon.
pub fn load_coupon(n: u32) -> String {
    format!("LOAD-{n:05}")
}

/// Makes users 1..=count that are missing, in the caller's transaction.
pub(crate) fn seed(conn: &dyn Conn, count: u32, now: Millis) -> Result<SeededUsers> {
    if !(1..=MAX_COUNT).contains(&count) {
        return Err(ShopError::invalid(
            "count",
            format!("须在 1 到 {MAX_COUNT} 之间，收到 {count}"),
        ));
    }
    let skus = orderable_skus(conn)?;
    if skus.is_empty() {
        return Err(ShopError::Corrupt("商品库中没有可下单的商品".to_owned()));
    }
    let mut seeded = SeededUsers {
        created: 0,
        existing: 0,
    };
    for n in 1..=count {
        let sub = load_sub(n);
        if users::find(conn, &sub)?.is_some() {
            seeded.existing += 1;
            continue;
        }
        let caller = users::find_or_create(conn, &sub, &format!("压测用户{n:05}"))?;
        let user = UserConn::new(conn, caller.id());
        for (sku_code, price) in lines_for(n, &skus) {
            put_in_cart(&user, sku_code, 1, price, now)?;
        }
        let code = load_coupon(n);
        conn.execute(
            "INSERT INTO coupon (code, name, kind, threshold_fen, amount_off_fen, category,
                                 valid_from, valid_to)
             VALUES (?1, ?2, '满减', ?3, ?4, NULL, ?5, ?6)",
            params![
                code,
                "压测满减券",
                COUPON_THRESHOLD,
                COUPON_OFF,
                now - DAY_MS,
                now + COUPON_DAYS * DAY_MS
            ],
        )?;
        hand_out_coupon(&user, &code, "未使用", None, now, None)?;
        seeded.created += 1;
    }
    tracing::info!(
        created = seeded.created,
        existing = seeded.existing,
        "seeded load-test users"
    );
    Ok(seeded)
}

/// The SKUs on sale with stock, by code: the lines are picked from these.
fn orderable_skus(conn: &dyn Conn) -> Result<Vec<(String, Fen)>> {
    conn.query_all(
        "SELECT sku_code, price_fen FROM sku WHERE status = ?1 AND stock > 0 ORDER BY sku_code",
        params![ON_SALE],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}

/// User `n`'s lines: distinct SKUs spread over the catalogue.
fn lines_for(n: u32, skus: &[(String, Fen)]) -> Vec<(&str, Fen)> {
    let len = skus.len();
    let mut picked: Vec<usize> = Vec::with_capacity(LINES_PER_USER);
    for k in 0..LINES_PER_USER.min(len) {
        let mut index = (n as usize * 7 + k * 131) % len;
        while picked.contains(&index) {
            index = (index + 1) % len;
        }
        picked.push(index);
    }
    picked
        .into_iter()
        .map(|i| (skus[i].0.as_str(), skus[i].1))
        .collect()
}
