/// The commands the page may call; each becomes an `allow-<name>` permission
/// that the main window's capability grants one by one.
const COMMANDS: &[&str] = &[
    "send_message",
    "respond_confirmation",
    "cancel_run",
    "list_sessions",
    "create_session",
    "open_session",
    "rename_session",
    "delete_session",
    "get_settings",
    "save_settings",
    "check_model",
    "list_tools",
    "list_audit",
    "tool_definition_change",
    "accept_tool_definition",
    "open_logs_folder",
];

fn main() {
    println!("cargo:rerun-if-changed=src-tauri/capabilities");
    // Capabilities live beside the shell's sources, not at the crate root.
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern("./src-tauri/capabilities/**/*")
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(error) = tauri_build::try_build(attributes) {
        panic!("tauri build step failed: {error:#}");
    }
}
