//! `submit_ticket`: hands a problem over to a human agent.

use std::fmt;

use crate::store::params;
use serde::{Deserialize, Serialize};

use crate::clock::{Millis, format_rfc3339};
use crate::error::{Result, ShopError};
use crate::orders;
use crate::params::{SubmitTicketParams, TicketTopic, given};
use crate::users::UserConn;

pub const OPEN: &str = "待处理";

/// What `submit_ticket` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ticket {
    pub ticket_no: String,
    pub topic: String,
    pub order_no: Option<String>,
    pub description: String,
    pub status: String,
    pub created_at: String,
}

pub fn submit(conn: &UserConn<'_>, now: Millis, p: &SubmitTicketParams) -> Result<Ticket> {
    let description = p.description.trim();
    if !(5..=500).contains(&description.chars().count()) {
        return Err(ShopError::invalid(
            "description",
            "问题描述须为 5 到 500 个字，写清发生了什么、希望怎样处理",
        ));
    }
    let order_no = orders::existing(conn, given(&p.order_no))?;
    let topic = p.topic.unwrap_or(TicketTopic::Other).as_str();
    let last: Option<i64> = conn.query_row(
        "SELECT MAX(CAST(SUBSTR(ticket_no, 3) AS INTEGER)) FROM ticket",
        params![],
        |row| row.get(0),
    )?;
    let ticket_no = format!("TK{:06}", last.unwrap_or(0) + 1);
    conn.execute(
        "INSERT INTO ticket (ticket_no, order_no, topic, description, status, created_at,
                             user_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            ticket_no,
            order_no,
            topic,
            description,
            OPEN,
            now,
            conn.user()
        ],
    )?;
    Ok(Ticket {
        ticket_no,
        topic: topic.to_owned(),
        order_no: order_no.map(str::to_owned),
        description: description.to_owned(),
        status: OPEN.to_owned(),
        created_at: format_rfc3339(now),
    })
}

impl fmt::Display for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "已提交人工客服工单 {}（{}{}），状态：{}。客服会尽快联系您。",
            self.ticket_no,
            self.topic,
            self.order_no
                .as_ref()
                .map(|o| format!("，订单 {o}"))
                .unwrap_or_default(),
            self.status
        )
    }
}
