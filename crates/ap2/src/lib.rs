//! The signatures both sides of an agent payment agree on, shared by the
//! shop (which signs checkouts and verifies mandates) and the app (which
//! verifies checkouts and signs mandates):
//!
//! - [`jcs`]: the one byte string a JSON value signs as (RFC 8785);
//! - [`jws`]: P-256 keys, their JWKs, and ES256 signatures, detached over
//!   a checkout (`ap2.merchant_authorization`) or compact;
//! - [`http_signature`]: RFC 9421 message signatures over an HTTP
//!   request and its body (RFC 9530 `Content-Digest`), as the business
//!   signs the order events it posts to a platform;
//! - [`mandate`]: the shopper's checkout mandate, an SD-JWT with key
//!   binding over exactly one signed checkout.

pub mod http_signature;
pub mod jcs;
pub mod jws;
pub mod mandate;
