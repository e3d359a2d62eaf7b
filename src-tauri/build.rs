/// The commands the page may call, from the one list of them; each becomes
/// an `allow-<name>` permission that the main window's capability grants one
/// by one.
macro_rules! app_commands {
    ($($name:ident),* $(,)?) => {
        const COMMANDS: &[&str] = &[$(stringify!($name)),*];
    };
}
include!("command_list.rs");

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
