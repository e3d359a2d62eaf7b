//! Access tokens that passed every check, kept until they expire. A
//! shopper's client sends the same token with every call: answering it from
//! here spares each call the signature check and the key's parsing. Only a
//! token that passed is kept, and only until its own `exp`: the leeway the
//! full check allows past it is left to the full check. A key the
//! authorization server withdraws stops new tokens at once; tokens it
//! signed earlier stay good here until they expire, as they would anywhere
//! that checks tokens offline.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::users::AccessToken;

/// The most tokens kept; past it the expired go first, then all.
const MOST_KEPT: usize = 10_000;

#[derive(Debug)]
struct Kept {
    token: AccessToken,
    /// The token's `exp`, seconds since the epoch.
    expires_at_secs: i64,
}

#[derive(Debug, Default)]
pub(crate) struct VerifiedTokens {
    by_token: Mutex<HashMap<String, Kept>>,
}

impl VerifiedTokens {
    /// What `token` says, if it passed the checks before and has not
    /// expired by `now_secs`.
    pub(crate) fn get(&self, token: &str, now_secs: i64) -> Option<AccessToken> {
        // A poisoned lock only means a panic mid-insert elsewhere: the map
        // holds whole entries or none, so it is still sound to use.
        let map = self.by_token.lock().unwrap_or_else(|e| e.into_inner());
        map.get(token)
            .filter(|kept| now_secs < kept.expires_at_secs)
            .map(|kept| kept.token.clone())
    }

    /// Keeps `verified`, what `token` says, until `expires_at_secs`.
    pub(crate) fn keep(
        &self,
        token: &str,
        verified: &AccessToken,
        expires_at_secs: i64,
        now_secs: i64,
    ) {
        if expires_at_secs <= now_secs {
            return;
        }
        let mut map = self.by_token.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MOST_KEPT {
            map.retain(|_, kept| now_secs < kept.expires_at_secs);
            if map.len() >= MOST_KEPT {
                map.clear();
            }
        }
        map.insert(
            token.to_owned(),
            Kept {
                token: verified.clone(),
                expires_at_secs,
            },
        );
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.by_token.lock().map(|map| map.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::Subject;

    const NOW: i64 = 1_800_000_000;

    fn says(sub: &str) -> AccessToken {
        AccessToken {
            subject: Subject(sub.to_owned()),
            id: Some(format!("jti-{sub}")),
            issued_at_secs: Some(NOW - 10),
        }
    }

    #[test]
    fn a_kept_token_is_answered_until_its_expiry_and_not_after() {
        let kept = VerifiedTokens::default();
        kept.keep("token-a", &says("alice"), NOW + 60, NOW);
        assert_eq!(kept.get("token-a", NOW), Some(says("alice")));
        assert_eq!(kept.get("token-a", NOW + 59), Some(says("alice")));
        assert_eq!(kept.get("token-a", NOW + 60), None);
        assert_eq!(kept.get("token-b", NOW), None);
    }

    #[test]
    fn a_token_already_expired_is_not_kept() {
        let kept = VerifiedTokens::default();
        kept.keep("token-a", &says("alice"), NOW, NOW);
        assert_eq!(kept.len(), 0);
    }

    #[test]
    fn when_full_the_expired_go_first_and_the_live_stay() {
        let kept = VerifiedTokens::default();
        for n in 0..MOST_KEPT - 1 {
            kept.keep(&format!("old-{n}"), &says("old"), NOW + 1, NOW);
        }
        kept.keep("live", &says("bob"), NOW + 3600, NOW);
        assert_eq!(kept.len(), MOST_KEPT);
        kept.keep("newcomer", &says("carol"), NOW + 3600, NOW + 2);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept.get("live", NOW + 2), Some(says("bob")));
        assert_eq!(kept.get("newcomer", NOW + 2), Some(says("carol")));
    }

    #[test]
    fn when_full_of_live_tokens_it_starts_again_with_the_newcomer() {
        let kept = VerifiedTokens::default();
        for n in 0..MOST_KEPT {
            kept.keep(&format!("live-{n}"), &says("someone"), NOW + 3600, NOW);
        }
        kept.keep("newcomer", &says("carol"), NOW + 3600, NOW);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept.get("newcomer", NOW), Some(says("carol")));
    }
}
