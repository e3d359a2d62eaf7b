//! Drives the built desktop app the way a user would: tauri-driver on reserved
//! loopback ports, and a small W3C WebDriver client that opens the app in a
//! session and reads its real DOM. The end-to-end tests and the start-up
//! benchmark share it.

mod ports;
pub mod processes;
mod session;
mod tauri_driver;

pub use session::{Element, Result, Session, WebDriverError};
pub use tauri_driver::{DriverError, TauriDriver};
