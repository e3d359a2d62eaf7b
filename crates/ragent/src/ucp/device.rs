//! The shopper's device key for one merchant: a P-256 key the core makes
//! and keeps with the other secrets (the OS keyring when it answers), never
//! shown to the page or the model. The merchant binds its public half to
//! the signed-in shopper (`POST <origin>/account/devices` with the fresh
//! access token of the sign-in) and names it; every checkout mandate the
//! core makes for that merchant is signed with it under that name.

use std::sync::Arc;
use std::time::Duration;

use ap2::jws::{Jwk, KeyError, SigningKey};
use ap2::mandate;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::secrets::{KEYRING_TIMEOUT, SecretError, SecretStore, off_thread};

/// Where the merchant takes a device's public key.
pub const DEVICES_PATH: &str = "/account/devices";

/// How long a mandate is good for: the shop completes it at once.
pub const MANDATE_LIFETIME_SECS: i64 = 10 * 60;

/// How long binding may take.
const BIND_TIMEOUT: Duration = Duration::from_secs(10);

/// The slot a server's device key is kept under.
pub fn slot(server: &str) -> String {
    format!("server/{server}/device_key")
}

/// What is kept in the slot: the private key, and the id the merchant gave
/// it once bound.
#[derive(Serialize, Deserialize)]
struct Kept {
    pkcs8: String,
    #[serde(default)]
    bound_as: Option<String>,
}

/// Why the device key could not be made, kept, bound or used.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error(transparent)]
    Secrets(#[from] SecretError),
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error("the stored device key is unreadable: {0}")]
    Unreadable(String),
    #[error("the merchant could not be reached to bind this device: {0}")]
    Unreachable(String),
    #[error("the merchant refused to bind this device (HTTP {status}): {message}")]
    Refused { status: u16, message: String },
    #[error("this device is not bound to the shopper at this merchant yet; sign in again")]
    NotBound,
}

/// A server's device key, read from or written to the secrets.
pub struct DeviceKey {
    server: String,
    secrets: Arc<dyn SecretStore>,
}

impl DeviceKey {
    pub fn new(server: &str, secrets: Arc<dyn SecretStore>) -> Self {
        Self {
            server: server.to_owned(),
            secrets,
        }
    }

    async fn read(&self) -> Result<Option<Kept>, DeviceError> {
        let (secrets, slot) = (self.secrets.clone(), slot(&self.server));
        let stored = off_thread(KEYRING_TIMEOUT, move || secrets.get(&slot)).await?;
        stored
            .map(|text| {
                serde_json::from_str(&text).map_err(|e| DeviceError::Unreadable(e.to_string()))
            })
            .transpose()
    }

    async fn keep(&self, kept: &Kept) -> Result<(), DeviceError> {
        let text =
            serde_json::to_string(kept).map_err(|e| DeviceError::Unreadable(e.to_string()))?;
        let (secrets, slot) = (self.secrets.clone(), slot(&self.server));
        off_thread(KEYRING_TIMEOUT, move || secrets.set(&slot, &text)).await?;
        Ok(())
    }

    /// The key, made and kept now if there was none.
    async fn key(&self) -> Result<(SigningKey, Option<String>), DeviceError> {
        if let Some(kept) = self.read().await? {
            let pkcs8 = B64
                .decode(&kept.pkcs8)
                .map_err(|e| DeviceError::Unreadable(e.to_string()))?;
            return Ok((SigningKey::from_pkcs8(&pkcs8)?, kept.bound_as));
        }
        let (key, pkcs8) = SigningKey::generate()?;
        self.keep(&Kept {
            pkcs8: B64.encode(pkcs8),
            bound_as: None,
        })
        .await?;
        Ok((key, None))
    }

    /// The public half (made now if there is no key yet).
    pub async fn public_jwk(&self) -> Result<Jwk, DeviceError> {
        Ok(self.key().await?.0.public_jwk())
    }

    /// Binds the key to the shopper signed in at `origin` with
    /// `access_token` (fresh from the sign-in; none where the merchant has
    /// no sign-in, as the local demo shop), and keeps the id the merchant
    /// gave it.
    pub async fn bind(
        &self,
        origin: &str,
        access_token: Option<&str>,
    ) -> Result<String, DeviceError> {
        let (key, _) = self.key().await?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(BIND_TIMEOUT)
            .build()
            .map_err(|e| DeviceError::Unreachable(e.to_string()))?;
        let mut request = client
            .post(format!("{origin}{DEVICES_PATH}"))
            .json(&serde_json::json!({ "jwk": key.public_jwk() }));
        if let Some(token) = access_token {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|e| DeviceError::Unreachable(e.to_string()))?;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            let message = body["messages"][0]["content"]
                .as_str()
                .or(body["error"].as_str())
                .unwrap_or("no reason given")
                .to_owned();
            return Err(DeviceError::Refused {
                status: status.as_u16(),
                message,
            });
        }
        let id = body["id"]
            .as_str()
            .filter(|id| !id.is_empty())
            .ok_or_else(|| DeviceError::Refused {
                status: status.as_u16(),
                message: "the answer names no device id".into(),
            })?
            .to_owned();
        let pkcs8 = self.read().await?.map(|kept| kept.pkcs8).ok_or_else(|| {
            DeviceError::Unreadable("the device key went missing while binding".into())
        })?;
        self.keep(&Kept {
            pkcs8,
            bound_as: Some(id.clone()),
        })
        .await?;
        Ok(id)
    }

    /// The shopper's mandate over `checkout` (exactly as the card showed
    /// it, merchant signature included) for the merchant at `origin`,
    /// signed now (`now_secs`).
    pub async fn mandate(
        &self,
        checkout: &Value,
        origin: &str,
        now_secs: i64,
    ) -> Result<String, DeviceError> {
        let (key, bound_as) = self.key().await?;
        let kid = bound_as.ok_or(DeviceError::NotBound)?;
        Ok(mandate::sign(
            &key.with_kid(kid),
            checkout,
            origin,
            now_secs,
            now_secs + MANDATE_LIFETIME_SECS,
        )?)
    }

    /// The id the merchant gave the key, once bound.
    pub async fn bound_as(&self) -> Result<Option<String>, DeviceError> {
        Ok(self.read().await?.and_then(|kept| kept.bound_as))
    }

    /// Revokes the key at the merchant (`DELETE <origin>/account/devices/<id>`,
    /// with the shopper's token while it still holds), then forgets it here
    /// whatever the merchant answered: a key this device no longer has
    /// signs nothing.
    pub async fn revoke(
        &self,
        origin: &str,
        access_token: Option<&str>,
    ) -> Result<(), DeviceError> {
        let bound = self.bound_as().await.unwrap_or(None);
        if let Some(id) = bound {
            let outcome = async {
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .timeout(BIND_TIMEOUT)
                    .build()?;
                let mut request = client.delete(format!("{origin}{DEVICES_PATH}/{id}"));
                if let Some(token) = access_token {
                    request = request.bearer_auth(token);
                }
                request.send().await
            }
            .await;
            match outcome {
                Ok(response) if response.status().is_success() => {
                    tracing::info!(server = %self.server, "device key revoked at the merchant");
                }
                Ok(response) => {
                    tracing::warn!(server = %self.server, status = %response.status(), "the merchant did not revoke the device key; it is forgotten here");
                }
                Err(error) => {
                    tracing::warn!(server = %self.server, %error, "the merchant could not be reached to revoke the device key; it is forgotten here");
                }
            }
        }
        self.forget().await
    }

    /// Forgets the key (the server was removed, or the shopper signed out).
    pub async fn forget(&self) -> Result<(), DeviceError> {
        let (secrets, slot) = (self.secrets.clone(), slot(&self.server));
        off_thread(KEYRING_TIMEOUT, move || secrets.delete(&slot)).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::secrets::MemorySecrets;

    #[tokio::test]
    async fn the_key_is_made_once_kept_with_the_secrets_and_signs_only_once_bound() {
        let secrets = Arc::new(MemorySecrets::new());
        let device = DeviceKey::new("shop", secrets.clone());
        let first = device.public_jwk().await.unwrap();
        assert_eq!(
            DeviceKey::new("shop", secrets.clone())
                .public_jwk()
                .await
                .unwrap(),
            first
        );
        assert!(secrets.snapshot().contains_key("server/shop/device_key"));

        let checkout = json!({"id": "chk_1", "ap2": {"merchant_authorization": "h..s"}});
        assert!(matches!(
            device
                .mandate(&checkout, "https://shop.example", 1_800_000_000)
                .await,
            Err(DeviceError::NotBound)
        ));

        device.forget().await.unwrap();
        assert!(secrets.snapshot().is_empty());
        assert_ne!(
            device.public_jwk().await.unwrap(),
            first,
            "a new key after forgetting"
        );
    }
}
