//! Parcel traces for `query_logistics`. Only tracking numbers printed on the
//! user's own orders can be traced: the tool is not a lookup for any parcel.

use std::fmt;

use crate::store::params;
use serde::{Deserialize, Serialize};

use crate::catalog;
use crate::clock::{Millis, format_rfc3339};
use crate::error::{Refusal, Result, ShopError};
use crate::orders;
use crate::params::{QueryLogisticsParams, given};
use crate::users::UserConn;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceEvent {
    pub at: String,
    pub location: String,
    pub description: String,
}

/// What `query_logistics` answers. Events are newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trace {
    pub tracking_no: String,
    pub order_no: String,
    pub order_status: String,
    pub delivered: bool,
    pub latest: Option<TraceEvent>,
    pub events: Vec<TraceEvent>,
}

pub fn query(conn: &UserConn<'_>, p: &QueryLogisticsParams) -> Result<Trace> {
    let tracking = p
        .tracking_no
        .as_deref()
        .map(catalog::normalize_code)
        .filter(|t| !t.is_empty());
    let order_no = given(&p.order_no);
    let (tracking_no, order_no, order_status) = match (tracking, order_no) {
        (Some(tracking_no), _) => {
            let found: Option<(String, String)> = conn.query_opt(
                "SELECT order_no, status FROM orders WHERE user_id = ?1 AND tracking_no = ?2",
                params![conn.user(), tracking_no],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?;
            let Some((order_no, status)) = found else {
                return Err(Refusal::UnknownTracking { tracking_no }.into());
            };
            (tracking_no, order_no, status)
        }
        (None, Some(order_no)) => {
            let status = orders::facts(conn, order_no)?.status;
            let tracking: Option<String> = conn.query_row(
                "SELECT tracking_no FROM orders WHERE user_id = ?1 AND order_no = ?2",
                params![conn.user(), order_no],
                |row| row.get(0),
            )?;
            let Some(tracking_no) = tracking else {
                return Err(Refusal::NotShipped {
                    order_no: order_no.to_owned(),
                    status,
                }
                .into());
            };
            (tracking_no, order_no.to_owned(), status)
        }
        (None, None) => {
            return Err(ShopError::invalid(
                "trackingNo",
                "请提供 trackingNo（运单号）或 orderNo（订单号）",
            ));
        }
    };
    let events = conn.query_all(
        "SELECT at, location, description FROM parcel_event
         WHERE tracking_no = ?1 ORDER BY at DESC, seq DESC",
        params![tracking_no],
        |row| {
            Ok(TraceEvent {
                at: format_rfc3339(row.get::<Millis>(0)?),
                location: row.get(1)?,
                description: row.get(2)?,
            })
        },
    )?;
    Ok(Trace {
        delivered: order_status == "已签收",
        latest: events.first().cloned(),
        tracking_no,
        order_no,
        order_status,
        events,
    })
}

impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "运单 {}（订单 {}，{}）",
            self.tracking_no, self.order_no, self.order_status
        )?;
        if self.events.is_empty() {
            return write!(f, "：暂无物流轨迹。");
        }
        writeln!(f, "，物流轨迹（最新在前）：")?;
        let lines: Vec<String> = self
            .events
            .iter()
            .map(|e| format!("- {} {} {}", e.at, e.location, e.description))
            .collect();
        write!(f, "{}", lines.join("\n"))
    }
}
