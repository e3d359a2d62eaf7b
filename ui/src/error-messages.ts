// A sentence for every error code of the core, in each language. The core's
// own message is English detail for logs and bug reports; the page leads
// with these. Typed as Record<ErrorCode, …>: a new code does not compile
// until it has its sentences.

import type { ErrorCode } from "./protocol";

export const ERROR_ZH: Record<ErrorCode, string> = {
  session_not_found: "找不到这个会话，它可能已被删除。",
  run_in_progress: "助手还在处理上一条消息，请稍候或先停止。",
  empty_message: "消息是空的。",
  no_pending_confirmation: "没有等待确认的操作了。",
  stale_reply: "这张确认卡片已经过时，请查看最新的卡片。",
  unknown_call: "卡片上没有这个操作。",
  already_decided: "这个操作已经决定过了。",
  duplicate_decision: "同一个操作被决定了两次。",
  confirmation_expired: "确认已过期，没有执行任何操作。",
  invalid_arguments: "修改后的参数不符合此工具的要求。",
  unknown_tool: "找不到这个工具，提供它的服务可能已断开。",
  definition_changed_again: "工具的定义又变化了，请重新查看后再接受。",
  preview_changed: "价格、库存或金额已变化，请查看新的预览后重新决定。",
  invalid_settings: "设置无法保存，请检查填写的内容。",
  auto_approve_not_allowed: "这个工具每次都必须询问你，不能设为自动批准。",
  nothing_to_retry: "没有需要重试的内容：助手已经回答了最后一条消息。",
  confirmation_pending: "有操作在等你确认，请先处理确认卡片。",
  model: "模型服务出错了，请检查模型设置或稍后再试。",
  model_not_configured: "还没有配置模型服务，请先在设置中填写。",
  model_unauthorized: "API 密钥被拒绝，请检查密钥。",
  model_unreachable: "连接不到这个地址，请检查接口地址和网络。",
  model_timeout: "模型服务没有及时回应，请稍后再试。",
  model_list_malformed: "这个地址回答的不是模型列表，请检查接口地址（通常以 /v1 结尾）。",
  mcp: "工具服务出错了，请稍后再试。",
  store: "本地数据读写失败。",
  internal: "应用内部出错了。",
};

export const ERROR_EN: Record<ErrorCode, string> = {
  session_not_found: "This conversation cannot be found; it may have been deleted.",
  run_in_progress: "The assistant is still answering the last message. Wait, or stop it first.",
  empty_message: "The message is empty.",
  no_pending_confirmation: "Nothing is waiting for your confirmation any more.",
  stale_reply: "This card is out of date. Look at the newest card.",
  unknown_call: "This action is not on the card.",
  already_decided: "This action was already decided.",
  duplicate_decision: "The same action was decided twice.",
  confirmation_expired: "The confirmation expired. Nothing was run.",
  invalid_arguments: "The edited arguments do not fit what this tool accepts.",
  unknown_tool: "This tool cannot be found; its server may have disconnected.",
  definition_changed_again: "The tool's definition changed again. Look at it again before accepting it.",
  preview_changed: "What this would do has changed (price, stock or total). Review the new preview and decide again.",
  invalid_settings: "The settings cannot be saved. Check what you entered.",
  auto_approve_not_allowed: "This tool always asks you; it cannot be approved automatically.",
  nothing_to_retry: "There is nothing to retry: the assistant has answered the last message.",
  confirmation_pending: "Actions are waiting for your confirmation; answer the card first.",
  model: "The model service failed. Check the model settings or try again later.",
  model_not_configured: "No model is configured yet. Set one up in the settings first.",
  model_unauthorized: "The provider refused the API key. Check the key.",
  model_unreachable: "Nothing answers at this address. Check the base URL and the network.",
  model_timeout: "The model provider did not answer in time. Try again later.",
  model_list_malformed: "This address did not answer with a model list. Check the base URL (it usually ends in /v1).",
  mcp: "A tool server failed. Try again later.",
  store: "Reading or writing the app's data failed.",
  internal: "Something went wrong inside the app.",
};
