// The commands the page may call, named once: build.rs makes each an
// `allow-<name>` permission, lib.rs registers each one's handler from
// commands.rs, and the main window's capability grants exactly these (the
// tests in tests/shell_ipc.rs check it). Each file defines `app_commands!`
// to take what it needs from this list.
app_commands![
    send_message,
    respond_confirmation,
    answer_input,
    open_input_url,
    cancel_run,
    retry_run,
    regenerate_answer,
    databases_restored,
    list_sessions,
    create_session,
    open_session,
    rename_session,
    delete_session,
    get_settings,
    save_settings,
    preview_mcp_import,
    apply_mcp_import,
    add_ucp_merchant,
    export_mcp_config,
    check_model,
    list_models,
    list_tools,
    list_audit,
    list_mandates,
    tool_definition_change,
    accept_tool_definition,
    open_logs_folder,
    server_status,
    sign_in,
    cancel_sign_in,
    go_on_without,
    sign_out,
];
