fn main() {
    // Capabilities live beside the shell's sources, not at the crate root.
    let attributes =
        tauri_build::Attributes::new().capabilities_path_pattern("./src-tauri/capabilities/**/*");
    if let Err(error) = tauri_build::try_build(attributes) {
        panic!("tauri build step failed: {error:#}");
    }
}
