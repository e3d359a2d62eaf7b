//! What a server asks the user for in the middle of a call (MCP
//! elicitation, inside an `input_required` result), judged by code before
//! anyone sees it, and the user's answer checked before it is sent back.
//!
//! - A form's schema must stay inside the spec's restricted subset: one flat
//!   object of strings (with `email`, `uri`, `date` or `date-time`
//!   formats), numbers, integers, booleans and enums (with titles).
//! - A form may not collect secrets (the spec: form mode must not be used
//!   for passwords, tokens and the like); a field that looks like one makes
//!   the whole request refused.
//! - A URL is shown with its origin, and only a web page (`https`, or
//!   `http` to a loopback host: [`crate::web_page`]) is accepted; as it
//!   arrives, only a page of the asking server's own origin or of one the
//!   user declared for it ([`PageOrigins`]).
//! - An accepted form answer must fit the schema it answers.

use serde_json::{Map, Value, json};

use crate::mcp::PageOrigins;
use crate::protocol::{InputAsk, InputAskKind, InputReply, KeyedReply};
use crate::web_page::web_page;

/// Why a request cannot be put before the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestRefusal {
    #[error("the server asked for {kind}, which this app does not provide")]
    Unsupported { kind: String },
    #[error("the form's schema is outside what MCP allows a form to ask: {0}")]
    Schema(String),
    #[error(
        "the form asks for {field:?}, which looks like a secret; a form must never collect one"
    )]
    Secret { field: String },
    #[error("the form's message asks for {word:?}, a credential; a form must never collect one")]
    SecretInMessage { word: String },
    #[error("the URL {url:?} cannot be shown: {why}")]
    Url { url: String, why: String },
    #[error(
        "the page {url:?} is at {origin}, which is neither the server's own address nor an origin the user declared for it ({})",
        allowed_text(allowed)
    )]
    ForeignPage {
        url: String,
        origin: String,
        allowed: Vec<String>,
    },
    #[error("the server sent no input requests")]
    Empty,
}

/// Why an answer is not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerRefusal {
    #[error("no answer was given for {0:?}")]
    Missing(String),
    #[error("{0:?} is not one of the requests")]
    Unknown(String),
    #[error("{0:?} was answered twice")]
    Twice(String),
    #[error("the answer to {key:?} does not fit its form: {details}")]
    Invalid { key: String, details: String },
}

/// Words that name a secret or a credential in a form's field name, title
/// or description, or in its message (lower-cased): a form from a server
/// must never collect one (a server that wants a payment or a sign-in sends
/// the user to its page instead), so a form that asks is declined unseen.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passcode",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "api key",
    "private_key",
    "privatekey",
    "private key",
    "cvv",
    "cvv2",
    "cvc",
    "otp",
    "pin",
    "one-time code",
    "one time code",
    "one-time password",
    "sms code",
    "verification code",
    "security code",
    "card number",
    "card_number",
    "cardnumber",
    "card-number",
    "bank card",
    "bankcard",
    "credit card",
    "debit card",
    "id number",
    "id_number",
    "id card",
    "national id",
    "passport number",
    "ssn",
    "social security",
    "密码",
    "口令",
    "令牌",
    "密钥",
    "验证码",
    "校验码",
    "动态码",
    "安全码",
    "卡号",
    "银行卡",
    "信用卡",
    "储蓄卡",
    "借记卡",
    "身份证",
    "证件号",
];

const STRING_FORMATS: &[&str] = &["email", "uri", "date", "date-time"];

/// The requests of an `input_required` result (its `inputRequests` map,
/// as JSON), each judged; the first that cannot be shown refuses all.
pub fn judge_requests(requests: &Value) -> Result<Vec<InputAsk>, RequestRefusal> {
    let Some(map) = requests.as_object() else {
        return Err(RequestRefusal::Empty);
    };
    if map.is_empty() {
        return Err(RequestRefusal::Empty);
    }
    map.iter()
        .map(|(key, request)| judge_one(key, request))
        .collect()
}

/// The requests of an `input_required` result as they arrive from a
/// server: judged as by [`judge_requests`], and a page to open must be one
/// of the server's `pages`. (A stored request shown again was judged so
/// when it arrived.)
pub fn judge_arriving(
    requests: &Value,
    pages: &PageOrigins,
) -> Result<Vec<InputAsk>, RequestRefusal> {
    let asks = judge_requests(requests)?;
    for ask in &asks {
        if let InputAskKind::Url { url, origin, .. } = &ask.kind {
            let allowed = url::Url::parse(url).is_ok_and(|page| pages.allows(&page));
            if !allowed {
                return Err(RequestRefusal::ForeignPage {
                    url: url.clone(),
                    origin: origin.clone(),
                    allowed: pages.listed().to_vec(),
                });
            }
        }
    }
    Ok(asks)
}

fn allowed_text(allowed: &[String]) -> String {
    if allowed.is_empty() {
        "it has none".to_string()
    } else {
        format!("its pages are at {}", allowed.join(", "))
    }
}

fn judge_one(key: &str, request: &Value) -> Result<InputAsk, RequestRefusal> {
    let method = request["method"].as_str().unwrap_or_default();
    if method != "elicitation/create" {
        return Err(RequestRefusal::Unsupported {
            kind: if method.is_empty() {
                "an unnamed request".to_string()
            } else {
                method.to_string()
            },
        });
    }
    let params = &request["params"];
    let message = params["message"].as_str().unwrap_or_default().to_string();
    let kind = match params["mode"].as_str().unwrap_or("form") {
        "url" => url_kind(params)?,
        "form" => {
            let schema = params["requestedSchema"].clone();
            check_form_schema(&schema)?;
            if let Some(word) = secret_word(&message) {
                return Err(RequestRefusal::SecretInMessage {
                    word: word.to_string(),
                });
            }
            InputAskKind::Form { schema }
        }
        other => {
            return Err(RequestRefusal::Unsupported {
                kind: format!("elicitation mode {other:?}"),
            });
        }
    };
    Ok(InputAsk {
        key: key.to_string(),
        message,
        kind,
    })
}

fn url_kind(params: &Value) -> Result<InputAskKind, RequestRefusal> {
    let text = params["url"].as_str().unwrap_or_default().to_string();
    let url = web_page(&text).map_err(|refusal| RequestRefusal::Url {
        url: text.clone(),
        why: refusal.to_string(),
    })?;
    Ok(InputAskKind::Url {
        origin: url.origin().ascii_serialization(),
        url: text,
        elicitation_id: params["elicitationId"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    })
}

/// The first secret word `text` names, if any.
fn secret_word(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    SECRET_WORDS.iter().copied().find(|word| {
        // Short words and phrases only as whole words ("pin", not
        // "shipping"; "id card", not "paid card").
        if word.is_ascii() && (word.len() <= 4 || word.contains(' ')) {
            lower.match_indices(word).any(|(at, _)| {
                let before = lower[..at].chars().next_back();
                let after = lower[at + word.len()..].chars().next();
                !before.is_some_and(|c| c.is_ascii_alphanumeric())
                    && !after.is_some_and(|c| c.is_ascii_alphanumeric())
            })
        } else {
            lower.contains(word)
        }
    })
}

fn looks_secret(text: &str) -> bool {
    secret_word(text).is_some()
}

/// Whether `schema` is a form MCP allows: a flat object of primitives.
pub fn check_form_schema(schema: &Value) -> Result<(), RequestRefusal> {
    let bad = |why: String| Err(RequestRefusal::Schema(why));
    if schema["type"] != "object" {
        return bad("the top level must be an object".into());
    }
    let Some(properties) = schema["properties"].as_object() else {
        return bad("it has no properties".into());
    };
    for (name, property) in properties {
        let title = property["title"].as_str().unwrap_or_default();
        let description = property["description"].as_str().unwrap_or_default();
        if looks_secret(name)
            || looks_secret(title)
            || looks_secret(description)
            || property["format"] == "password"
        {
            return Err(RequestRefusal::Secret {
                field: name.clone(),
            });
        }
        check_property(name, property).map_err(RequestRefusal::Schema)?;
    }
    if let Some(required) = schema.get("required") {
        let listed = required.as_array().map(|names| {
            names
                .iter()
                .all(|n| n.as_str().is_some_and(|n| properties.contains_key(n)))
        });
        if listed != Some(true) {
            return bad("`required` must list properties of the form".into());
        }
    }
    Ok(())
}

fn check_property(name: &str, property: &Value) -> Result<(), String> {
    match property["type"].as_str() {
        Some("string") => {
            if let Some(format) = property.get("format") {
                let known = format.as_str().is_some_and(|f| STRING_FORMATS.contains(&f));
                if !known {
                    return Err(format!("{name}: format {format} is not one a form may use"));
                }
            }
            for list in ["enum", "oneOf", "anyOf"] {
                if let Some(options) = property.get(list) {
                    check_options(name, list, options)?;
                }
            }
            Ok(())
        }
        Some("number" | "integer" | "boolean") => Ok(()),
        Some("array") => {
            // Multi-select enums: an array of string options.
            let items = &property["items"];
            let options = items.get("enum").or_else(|| items.get("anyOf"));
            match options {
                Some(options) => check_options(name, "items", options),
                None => Err(format!("{name}: an array may only be a list of options")),
            }
        }
        Some(other) => Err(format!("{name}: type {other:?} is not one a form may use")),
        None => Err(format!("{name}: it has no type")),
    }
}

fn check_options(name: &str, list: &str, options: &Value) -> Result<(), String> {
    let Some(options) = options.as_array() else {
        return Err(format!("{name}: {list} must be a list"));
    };
    let fine = options
        .iter()
        .all(|option| option.is_string() || option.get("const").is_some_and(Value::is_string));
    if fine && !options.is_empty() {
        Ok(())
    } else {
        Err(format!("{name}: {list} must list text options"))
    }
}

/// The `inputResponses` to send: every request answered once, each
/// accepted form's content fitting its schema. A URL request's accept
/// carries no content (the user finished on the page).
pub fn responses(
    asks: &[InputAsk],
    replies: &[KeyedReply],
) -> Result<Map<String, Value>, AnswerRefusal> {
    let mut out = Map::new();
    for reply in replies {
        let Some(ask) = asks.iter().find(|a| a.key == reply.key) else {
            return Err(AnswerRefusal::Unknown(reply.key.clone()));
        };
        if out.contains_key(&reply.key) {
            return Err(AnswerRefusal::Twice(reply.key.clone()));
        }
        out.insert(reply.key.clone(), response(ask, &reply.reply)?);
    }
    if let Some(missing) = asks.iter().find(|a| !out.contains_key(&a.key)) {
        return Err(AnswerRefusal::Missing(missing.key.clone()));
    }
    Ok(out)
}

fn response(ask: &InputAsk, reply: &InputReply) -> Result<Value, AnswerRefusal> {
    Ok(match reply {
        InputReply::Decline => json!({"action": "decline"}),
        InputReply::Cancel => json!({"action": "cancel"}),
        InputReply::Accept { content } => match &ask.kind {
            InputAskKind::Url { .. } => json!({"action": "accept"}),
            InputAskKind::Form { schema } => {
                let content = content.clone().unwrap_or_else(|| json!({}));
                crate::schema::validate_arguments(schema, &content).map_err(|errors| {
                    AnswerRefusal::Invalid {
                        key: ask.key.clone(),
                        details: errors.join("; "),
                    }
                })?;
                json!({"action": "accept", "content": content})
            }
        },
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn form(schema: Value) -> Value {
        json!({"method": "elicitation/create", "params": {"mode": "form", "message": "确认支付", "requestedSchema": schema}})
    }

    fn payment_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "method": {"type": "string", "title": "支付方式", "oneOf": [
                    {"const": "alipay", "title": "支付宝"}, {"const": "wechat", "title": "微信支付"}
                ]},
                "note": {"type": "string", "format": "email"},
                "copies": {"type": "integer", "minimum": 1},
                "agree": {"type": "boolean"}
            },
            "required": ["method"]
        })
    }

    #[test]
    fn a_form_of_primitives_and_titled_options_is_shown() {
        let asks = judge_requests(&json!({"pay": form(payment_schema())})).unwrap();
        assert_eq!(asks.len(), 1);
        assert_eq!(asks[0].key, "pay");
        assert_eq!(asks[0].message, "确认支付");
        assert!(matches!(asks[0].kind, InputAskKind::Form { .. }));
    }

    #[test]
    fn forms_outside_the_restricted_subset_are_refused() {
        let nested =
            json!({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}});
        let odd_format =
            json!({"type": "object", "properties": {"a": {"type": "string", "format": "ipv4"}}});
        let not_object = json!({"type": "string"});
        let bad_required =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]});
        for schema in [nested, odd_format, not_object, bad_required] {
            let refused = judge_requests(&json!({"k": form(schema.clone())}));
            assert!(
                matches!(refused, Err(RequestRefusal::Schema(_))),
                "{schema}: {refused:?}"
            );
        }
    }

    #[test]
    fn fields_that_look_like_secrets_are_refused() {
        for (name, title) in [
            ("password", ""),
            ("api_token", ""),
            ("code", "支付密码"),
            ("card_pin", ""),
            ("x", "短信验证码"),
        ] {
            let schema =
                json!({"type": "object", "properties": {name: {"type": "string", "title": title}}});
            assert_eq!(
                judge_requests(&json!({"k": form(schema)})),
                Err(RequestRefusal::Secret {
                    field: name.to_string()
                }),
                "{name} / {title}"
            );
        }
        let shipping = json!({"type": "object", "properties": {"shipping": {"type": "string", "title": "配送方式"}}});
        assert!(judge_requests(&json!({"k": form(shipping)})).is_ok());
    }

    /// Where a form names what it asks for.
    #[derive(Clone, Copy, Debug)]
    enum Place {
        Name,
        Title,
        Description,
        Message,
    }

    fn form_naming(place: Place, words: &str) -> Value {
        let field = |name: &str, title: &str, description: &str| {
            json!({"type": "object", "properties": {name: {
                "type": "string", "title": title, "description": description
            }}})
        };
        let (schema, message) = match place {
            Place::Name => (field(words, "", ""), ""),
            Place::Title => (field("value", words, ""), ""),
            Place::Description => (field("value", "", words), ""),
            Place::Message => (field("value", "", ""), words),
        };
        json!({"k": {"method": "elicitation/create",
                     "params": {"mode": "form", "message": message, "requestedSchema": schema}}})
    }

    #[test]
    fn a_form_asking_for_a_credential_anywhere_is_declined() {
        use Place::*;
        let asks_credential = [
            (Name, "card_number"),
            (Title, "Card number"),
            (
                Description,
                "The 16 digits on the front of your credit card",
            ),
            (Message, "Please enter your bank card number to continue"),
            (Title, "CVV"),
            (Name, "cvc"),
            (Description, "The 3-digit security code on the back"),
            (Message, "Enter the CVV2 of your card"),
            (Name, "pin"),
            (Title, "Card PIN"),
            (Message, "Type your PIN to confirm"),
            (Title, "SMS code"),
            (Description, "The one-time code we texted you"),
            (Message, "Enter the verification code sent to your phone"),
            (Name, "otp"),
            (Title, "ID number"),
            (Message, "Your national ID is required"),
            (Name, "ssn"),
            (Title, "Password"),
            (Description, "Your account passphrase"),
            (Message, "Re-enter your password to authorize"),
            (Title, "银行卡号"),
            (Description, "请输入信用卡背面的安全码"),
            (Message, "请输入您的储蓄卡卡号"),
            (Title, "CVV 安全码"),
            (Message, "请输入六位支付密码"),
            (Title, "短信验证码"),
            (Description, "我们发给您的动态码"),
            (Message, "请填写身份证号码以完成实名认证"),
            (Title, "证件号"),
            (Message, "请输入银行卡有效期"),
            (Description, "登录口令"),
        ];
        for (place, words) in asks_credential {
            let judged = judge_requests(&form_naming(place, words));
            assert!(
                matches!(
                    judged,
                    Err(RequestRefusal::Secret { .. } | RequestRefusal::SecretInMessage { .. })
                ),
                "{place:?} {words:?}: {judged:?}"
            );
        }
        let plain = [
            (Name, "shipping"),
            (Title, "Spinning speed"),
            (Description, "Your shipping address"),
            (Message, "Which colour would you like?"),
            (Title, "支付方式"),
            (
                Message,
                "确认支付订单 88236：应付 ¥6799.00。请选择支付方式后提交。",
            ),
            (Description, "收货人电话"),
            (Message, "The paid card game ships tomorrow"),
        ];
        for (place, words) in plain {
            assert!(
                judge_requests(&form_naming(place, words)).is_ok(),
                "{place:?} {words:?}"
            );
        }
    }

    #[test]
    fn a_url_is_shown_with_its_origin_and_only_over_https() {
        let url = |u: &str| json!({"k": {"method": "elicitation/create", "params": {"mode": "url", "message": "去支付", "url": u, "elicitationId": "e1"}}});
        let asks = judge_requests(&url("https://pay.example.com:8443/checkout?o=1")).unwrap();
        assert_eq!(
            asks[0].kind,
            InputAskKind::Url {
                url: "https://pay.example.com:8443/checkout?o=1".into(),
                origin: "https://pay.example.com:8443".into(),
                elicitation_id: "e1".into(),
            }
        );
        assert!(judge_requests(&url("http://127.0.0.1:4000/pay")).is_ok());
        for bad in [
            "http://pay.example.com/",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "smb://share.example/x",
            "vscode://ext/install",
            "https://user:pw@pay.example.com/",
            "not a url",
        ] {
            assert!(
                matches!(judge_requests(&url(bad)), Err(RequestRefusal::Url { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_page_arriving_from_a_server_must_be_on_one_of_its_origins() {
        let url = |u: &str| json!({"k": {"method": "elicitation/create", "params": {"mode": "url", "message": "去支付", "url": u, "elicitationId": "e1"}}});
        let shop = PageOrigins::of(Some("https://shop.example.com/mcp"), &[]);
        assert!(judge_arriving(&url("https://shop.example.com/pay/7f3a"), &shop).is_ok());
        let refused = judge_arriving(&url("https://shop.example.com.evil.example/pay"), &shop);
        assert_eq!(
            refused,
            Err(RequestRefusal::ForeignPage {
                url: "https://shop.example.com.evil.example/pay".into(),
                origin: "https://shop.example.com.evil.example".into(),
                allowed: vec!["https://shop.example.com".into()],
            })
        );
        let stdio = PageOrigins::none();
        let refused = judge_arriving(&url("https://shop.example.com/pay/7f3a"), &stdio)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("it has none"), "{refused}");
        // A form asks for no page: the origins do not matter.
        let form = json!({"k": form(json!({
            "type": "object", "properties": {"n": {"type": "integer"}}
        }))});
        assert!(judge_arriving(&form, &stdio).is_ok());
    }

    #[test]
    fn sampling_and_roots_are_not_provided() {
        let sampling = json!({"k": {"method": "sampling/createMessage", "params": {}}});
        assert!(matches!(
            judge_requests(&sampling),
            Err(RequestRefusal::Unsupported { .. })
        ));
        assert_eq!(judge_requests(&json!({})), Err(RequestRefusal::Empty));
    }

    #[test]
    fn answers_are_checked_against_the_form_before_they_are_sent() {
        let asks = judge_requests(&json!({"pay": form(payment_schema())})).unwrap();
        let accept = |content: Value| {
            vec![KeyedReply {
                key: "pay".into(),
                reply: InputReply::Accept {
                    content: Some(content),
                },
            }]
        };
        assert_eq!(
            responses(&asks, &accept(json!({"method": "alipay"}))).unwrap(),
            json!({"pay": {"action": "accept", "content": {"method": "alipay"}}})
                .as_object()
                .unwrap()
                .clone()
        );
        assert!(matches!(
            responses(&asks, &accept(json!({"method": "cash"}))),
            Err(AnswerRefusal::Invalid { .. })
        ));
        assert!(matches!(
            responses(&asks, &accept(json!({}))),
            Err(AnswerRefusal::Invalid { .. })
        ));
        let decline = vec![KeyedReply {
            key: "pay".into(),
            reply: InputReply::Decline,
        }];
        assert_eq!(
            responses(&asks, &decline).unwrap()["pay"],
            json!({"action": "decline"})
        );
        assert_eq!(
            responses(&asks, &[]),
            Err(AnswerRefusal::Missing("pay".into()))
        );
        let stray = vec![KeyedReply {
            key: "other".into(),
            reply: InputReply::Cancel,
        }];
        assert_eq!(
            responses(&asks, &stray),
            Err(AnswerRefusal::Unknown("other".into()))
        );
    }
}
