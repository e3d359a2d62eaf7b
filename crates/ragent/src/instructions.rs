//! The assistant's instructions. The text lives in `prompts/` so it can be
//! read and reviewed as prose; this module only includes it.

/// The system prompt, in Simplified Chinese, as the shop's customers write.
pub const SYSTEM_PROMPT_ZH_CN: &str = include_str!("../prompts/system.zh-CN.md");

/// The system prompt the agent sends first in every request.
pub fn system_prompt() -> &'static str {
    SYSTEM_PROMPT_ZH_CN
}

/// What the model is told, as a tool result, about calls that did not run
/// or whose outcome is not a server's answer. Kept here, next to the
/// prompt, so all text meant for the model is in one place.
pub mod results {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use crate::llm::turn::ArgumentsProblem;

    /// The user declined the call on the confirmation card.
    pub fn declined(reason: Option<&str>) -> String {
        let mut text = String::from(
            "用户在确认卡片上拒绝了此操作，操作没有执行。这不是错误，也不是缺少权限。\
             除非用户再次提出，否则不要重试此操作。",
        );
        if let Some(reason) = reason.map(str::trim).filter(|r| !r.is_empty()) {
            text.push_str("用户给出的理由：");
            text.push_str(reason);
        }
        text
    }

    /// The user wrote a new message instead of deciding.
    pub fn superseded() -> String {
        "用户没有在确认卡片上做决定，而是发送了新消息，因此此操作没有执行。\
         请回应用户的新消息；除非用户再次提出，否则不要重试此操作。"
            .to_string()
    }

    /// Nobody decided before the card expired.
    pub fn expired() -> String {
        "确认卡片在用户做决定之前已过期，此操作没有执行。除非用户再次提出，否则不要重试此操作。"
            .to_string()
    }

    pub fn unknown_tool(name: &str, available: &[String]) -> String {
        format!(
            "没有名为 {name} 的工具，调用没有执行。可用的工具：{}。",
            available.join("、")
        )
    }

    /// The call's arguments are not a JSON object. The text as it came is
    /// quoted here (cut short if long), never sent back as arguments:
    /// providers refuse a request whose history holds such a call.
    pub fn invalid_arguments(problem: &ArgumentsProblem, raw: &str) -> String {
        let what = match problem {
            ArgumentsProblem::NotJson(error) => format!("参数不是有效的 JSON（{error}）"),
            ArgumentsProblem::NotAnObject(kind) => {
                format!("参数是 JSON {kind}，不是 JSON 对象")
            }
        };
        const SHOWN: usize = 300;
        let mut quoted: String = raw.chars().take(SHOWN).collect();
        if raw.chars().nth(SHOWN).is_some() {
            quoted.push_str("…（已截断）");
        }
        format!(
            "{what}，调用没有执行。收到的参数原文：{quoted}\n请用有效的 JSON 对象作为参数重新调用。"
        )
    }

    pub fn schema_mismatch(details: &[String]) -> String {
        format!(
            "参数不符合该工具的输入模式，调用没有执行：{}。请修正参数后重新调用。",
            details.join("；")
        )
    }

    /// A per-tool setting forbids the tool.
    pub fn policy_denied() -> String {
        "用户的设置禁止使用此工具，调用没有执行。不要重试；如有需要，请告诉用户。".to_string()
    }

    /// The app stopped while the call ran, and its server cannot tell.
    pub fn interrupted() -> String {
        "程序在此操作执行期间中断，结果未知：它可能已经执行，也可能没有。\
         请先用只读工具核实（例如查询订单或购物车），不要直接重复此操作。"
            .to_string()
    }

    pub fn call_failed(error: &str) -> String {
        format!("调用失败，没有得到结果：{error}")
    }

    /// Approved (or allowed) but never sent: the run stopped first, and
    /// the user then wrote a new message.
    pub fn not_sent_superseded() -> String {
        "此操作已获批准，但运行在发送前中断，用户随后发送了新消息，因此此操作没有执行。\
         请回应用户的新消息；除非用户再次提出，否则不要重试此操作。"
            .to_string()
    }

    /// Approved but never sent: the app stopped first, and its card had
    /// expired by the time it started again.
    pub fn not_sent_expired() -> String {
        "此操作已获批准，但程序在发送前停止，重新启动时确认卡片已过期，因此此操作没有执行。\
         除非用户再次提出，否则不要重试此操作。"
            .to_string()
    }

    /// The server asked the user for input and the user wrote a new
    /// message instead of answering.
    pub fn input_superseded() -> String {
        "服务器在执行此操作时请用户补充信息，用户没有回答，而是发送了新消息，因此此操作没有完成。\
         请回应用户的新消息；除非用户再次提出，否则不要重试此操作。"
            .to_string()
    }

    /// The server's request for input was not answered in time.
    pub fn input_expired() -> String {
        "服务器在执行此操作时请用户补充信息，但请求在用户回答之前已过期，此操作没有完成。\
         除非用户再次提出，否则不要重试此操作。"
            .to_string()
    }

    /// Code declined, for the user, a request for input the server made
    /// on the connection during the call; the server's result follows.
    pub fn input_declined_for_the_user(why: &str) -> String {
        format!(
            "服务器在执行此操作时请用户补充信息，但这个请求不能展示给用户（{why}），\
             应用已代用户拒绝，服务器收到的是“拒绝”。以下是服务器给出的结果："
        )
    }

    /// Code refused what the server asked the user for.
    pub fn input_refused(why: &str) -> String {
        format!(
            "服务器在执行此操作时请用户补充信息，但这个请求不能展示给用户（{why}），此操作没有完成。\
             不要重试；如有需要，请告诉用户。"
        )
    }

    /// The server kept asking for input past the limit.
    pub fn input_rounds_exceeded(limit: u32) -> String {
        format!(
            "服务器在执行此操作时已连续 {limit} 次请用户补充信息，仍没有给出结果，调用已停止。\
             请先用只读工具核实当前状态，再告诉用户。"
        )
    }

    /// The arguments about to be sent differ from those approved.
    pub fn approval_mismatch() -> String {
        "要发送的参数与用户批准的参数不一致，调用没有执行。".to_string()
    }

    /// A call whose arguments the user changed on the card: the model's own
    /// call in the history still holds what it proposed, so its result
    /// starts with what the user changed.
    pub fn edited_by_user(proposed: &Value, sent: &Value, result: &str) -> String {
        format!(
            "注意：用户在确认卡片上修改了参数（{}），此操作按修改后的参数处理，不是按你提出的参数。\n{result}",
            changes(proposed, sent).join("；")
        )
    }

    /// Each top-level argument that differs, as `name：old → new`.
    fn changes(proposed: &Value, sent: &Value) -> Vec<String> {
        let shown =
            |value: Option<&Value>| value.map_or_else(|| "（无）".to_owned(), Value::to_string);
        match (proposed.as_object(), sent.as_object()) {
            (Some(before), Some(after)) => {
                let names: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
                names
                    .into_iter()
                    .filter(|name| before.get(*name) != after.get(*name))
                    .map(|name| {
                        format!(
                            "{name}：{} → {}",
                            shown(before.get(name)),
                            shown(after.get(name))
                        )
                    })
                    .collect()
            }
            _ => vec![format!("{proposed} → {sent}")],
        }
    }
}

/// What the user is told, outside the chat, about calls after a restart.
pub mod notices {
    pub fn outcome_unknown(title: &str) -> String {
        format!("「{title}」执行时程序中断，无法确认是否已完成。请查看订单或购物车核实。")
    }

    /// An approved call the app stopped before sending, shown again.
    pub fn asked_again(title: &str) -> String {
        format!("「{title}」已批准，但程序在发送前停止，没有执行。请在确认卡片上再次确认。")
    }

    /// An approved call the app stopped before sending, whose card expired.
    pub fn not_sent_expired(title: &str) -> String {
        format!("「{title}」已批准，但程序在发送前停止；确认卡片已过期，此操作没有执行。")
    }

    /// An approved call a failed run left unsent, dropped for a new message.
    pub fn not_sent_superseded(title: &str) -> String {
        format!("「{title}」已批准，但上一次运行在发送前中断；因为你发送了新消息，此操作没有执行。")
    }

    pub fn recovered(title: &str) -> String {
        format!("「{title}」在程序中断时正在执行，重启后已安全地重新确认结果。")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_states_the_rules_the_agent_relies_on() {
        let prompt = system_prompt();
        for must in [
            "比特严选",
            "SKU",
            "订单号",
            "确认卡片",
            "不要重试",
            "工具结果",
        ] {
            assert!(prompt.contains(must), "the prompt should mention {must}");
        }
    }

    #[test]
    fn an_edited_call_tells_the_model_each_argument_the_user_changed() {
        let proposed = serde_json::json!({"orderNo": "88239", "couponCode": "SHOP-5000-300"});
        let sent = serde_json::json!({"orderNo": "88239", "couponCode": "ACC-500-50", "note": "x"});
        assert_eq!(
            results::edited_by_user(&proposed, &sent, "已下单"),
            "注意：用户在确认卡片上修改了参数（couponCode：\"SHOP-5000-300\" → \"ACC-500-50\"；note：（无） → \"x\"），此操作按修改后的参数处理，不是按你提出的参数。\n已下单"
        );
    }

    #[test]
    fn a_decline_says_it_is_not_an_error_and_carries_the_reason() {
        let text = results::declined(Some(" 太贵了 "));
        for must in ["拒绝", "没有执行", "不是错误", "不要重试", "太贵了"] {
            assert!(text.contains(must), "{text}");
        }
        assert!(!results::declined(None).contains("理由"));
    }
}
