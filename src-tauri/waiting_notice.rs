//! The OS notification that tells the shopper a card waits while the
//! window is in the background, in the shopper's language: the one chosen
//! in the settings, else the system's, as the page decides.
//!
//! Sent from Rust (`notify-rust`) rather than through Tauri's notification
//! plugin, whose script would ask the shell for a permission on every page
//! load; the page itself never notifies.

use ragent::settings::Language;

/// The notification's title and body.
#[derive(Debug, PartialEq, Eq)]
pub struct WaitingNotice {
    pub title: &'static str,
    pub body: &'static str,
}

impl WaitingNotice {
    /// The notice in `chosen`, else in the language of the system's
    /// locale `system` (a `LANG` value such as `zh_CN.UTF-8`): Chinese for
    /// a Chinese locale, English otherwise, as the page's `langFor`.
    pub fn in_language(chosen: Option<Language>, system: Option<&str>) -> WaitingNotice {
        let chinese = match chosen {
            Some(language) => language == Language::ZhCn,
            None => system.is_some_and(|locale| locale.to_lowercase().starts_with("zh")),
        };
        if chinese {
            WaitingNotice {
                title: "比特严选助手",
                body: "有一项操作等待你确认",
            }
        } else {
            WaitingNotice {
                title: "Bit Select Assistant",
                body: "An action is waiting for your approval",
            }
        }
    }

    /// Shows the notice. It waits on the notification server over D-Bus,
    /// so it runs on a blocking task, never on the thread that forwards
    /// events; a desktop without a notification server is only logged.
    pub fn show(self, session: String) {
        tauri::async_runtime::spawn_blocking(move || {
            let shown = notify_rust::Notification::new()
                .summary(self.title)
                .body(self.body)
                .auto_icon()
                .show();
            if let Err(error) = shown {
                tracing::info!(%error, %session, "no OS notification for a waiting card");
            }
        });
    }
}

/// The system's language for messages as GLib (and so the page's web
/// view) finds it: the first of `LANGUAGE`'s list, then `LC_ALL`,
/// `LC_MESSAGES` and `LANG`, the first one set and not empty.
pub fn system_locale() -> Option<String> {
    ["LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"]
        .into_iter()
        .filter_map(|name| std::env::var(name).ok())
        .filter_map(|value| value.split(':').next().map(str::to_owned))
        .find(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chosen_language_wins_over_the_system() {
        let notice = WaitingNotice::in_language(Some(Language::En), Some("zh_CN.UTF-8"));
        assert_eq!(notice.title, "Bit Select Assistant");
        let notice = WaitingNotice::in_language(Some(Language::ZhCn), Some("en_US.UTF-8"));
        assert_eq!(notice.body, "有一项操作等待你确认");
    }

    #[test]
    fn without_a_choice_a_chinese_system_gets_chinese_and_any_other_english() {
        let chinese = WaitingNotice::in_language(None, Some("zh_TW.UTF-8"));
        assert_eq!(chinese.title, "比特严选助手");
        let english = WaitingNotice::in_language(None, Some("de_DE.UTF-8"));
        assert_eq!(english.body, "An action is waiting for your approval");
        let unset = WaitingNotice::in_language(None, None);
        assert_eq!(unset.title, "Bit Select Assistant");
    }
}
