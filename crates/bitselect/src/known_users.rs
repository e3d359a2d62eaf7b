//! The users an instance has already resolved from a signed-in subject. A
//! user's id never changes and no user is ever deleted, so a mapping once
//! read holds for as long as the database does; remembering it spares every
//! signed-in call a transaction of its own just to find who it acts for.

use std::collections::HashMap;
use std::sync::RwLock;

use crate::users::Caller;

/// The most subjects remembered; past it the memory starts again empty (a
/// lookup is only a transaction away).
const MOST_REMEMBERED: usize = 100_000;

#[derive(Debug, Default)]
pub(crate) struct KnownUsers {
    by_subject: RwLock<HashMap<String, Caller>>,
}

impl KnownUsers {
    pub(crate) fn get(&self, sub: &str) -> Option<Caller> {
        // A poisoned lock only means a panic mid-insert elsewhere: the map
        // holds whole entries or none, so it is still sound to read.
        let map = self.by_subject.read().unwrap_or_else(|e| e.into_inner());
        map.get(sub).cloned()
    }

    pub(crate) fn remember(&self, caller: &Caller) {
        let mut map = self.by_subject.write().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MOST_REMEMBERED && !map.contains_key(caller.sub()) {
            map.clear();
        }
        map.insert(caller.sub().to_owned(), caller.clone());
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.by_subject.read().map(|map| map.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_subject_is_found_and_another_is_not() {
        let known = KnownUsers::default();
        let alice = Caller::found(7, "alice");
        known.remember(&alice);
        assert_eq!(known.get("alice"), Some(alice));
        assert_eq!(known.get("bob"), None);
    }

    #[test]
    fn past_the_bound_the_memory_starts_again_with_the_newcomer() {
        let known = KnownUsers::default();
        for n in 0..MOST_REMEMBERED {
            known.remember(&Caller::found(n as i64, &format!("user-{n}")));
        }
        assert_eq!(known.len(), MOST_REMEMBERED);
        let newcomer = Caller::found(-1, "newcomer");
        known.remember(&newcomer);
        assert_eq!(known.len(), 1);
        assert_eq!(known.get("newcomer"), Some(newcomer));
    }
}
