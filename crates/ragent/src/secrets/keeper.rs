//! The settings in and out of the database with their secrets kept apart:
//! the document holds names, the secret store holds values. Blocking (a
//! keyring answers over D-Bus): the agent runs these through `off_thread`.

use super::slots::{self, split};
use super::{DatabaseSecrets, SecretError, SecretStore};
use crate::mcp::sign_in::tokens::{SIGN_IN_SUFFIX, slot as sign_in_slot};
use crate::settings::Settings;
use crate::store::{Store, kv};

/// Reads the stored settings (storing `initial` on first run) and fills in
/// their secrets from `active`. Values still inline in the document (as an
/// older version stored them), and values the database kept while no
/// keyring answered (`drain`, when `active` is the keyring), move to
/// `active`; the document is then rewritten without them.
pub fn load(
    store: &Store,
    active: &dyn SecretStore,
    drain: Option<&DatabaseSecrets>,
    initial: Settings,
    now: i64,
) -> Result<Settings, SecretError> {
    let doc = match store.with_conn(kv::load_settings)? {
        Some(doc) => doc,
        None => {
            save(store, active, &Settings::default(), &initial, now)?;
            return Ok(initial);
        }
    };
    let mut moved = false;
    let settings = slots::fill::<SecretError>(&doc, |slot| {
        if let Some(value) = active.get(slot)? {
            return Ok(Some(value));
        }
        match drain {
            Some(db) => {
                let found = db.get(slot)?;
                moved |= found.is_some();
                Ok(found)
            }
            None => Ok(None),
        }
    })?;
    let (stripped, _) = split(&doc);
    if moved || stripped != doc {
        save(store, active, &settings, &settings, now)?;
        // The document with values in it is still a page image in the log.
        store.scrub_log()?;
        tracing::info!(
            store = active.kind(),
            "secret values moved out of the settings document"
        );
    }
    if let Some(db) = drain {
        for name in db.names()? {
            // Sign-ins are no settings slot; they move as they are.
            if name.ends_with(SIGN_IN_SUFFIX)
                && let Some(value) = db.get(&name)?
            {
                active.set(&name, &value)?;
            }
            db.delete(&name)?;
        }
    }
    Ok(settings)
}

/// Stores `new`: its secret values in `active` first, then the document
/// without them, then drops the secrets `old` had that `new` has not.
pub fn save(
    store: &Store,
    active: &dyn SecretStore,
    old: &Settings,
    new: &Settings,
    now: i64,
) -> Result<(), SecretError> {
    let (doc, values) = split(new);
    for (slot, value) in &values {
        active.set(slot, value)?;
    }
    store.with_conn(|c| kv::save_settings(c, &doc, now))?;
    let (_, old_values) = split(old);
    for (slot, _) in old_values {
        if !values.iter().any(|(kept, _)| *kept == slot) {
            active.delete(&slot)?;
        }
    }
    // A server taken out of the settings takes its sign-in and its
    // device key with it.
    for server in old.mcp_servers.keys() {
        if !new.mcp_servers.contains_key(server) {
            active.delete(&sign_in_slot(server))?;
            active.delete(&crate::ucp::device::slot(server))?;
        }
    }
    Ok(())
}
