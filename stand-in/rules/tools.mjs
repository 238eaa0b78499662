// `tools` and `tool_choice`: custom tools with their schema, Anthropic-defined tools with their
// fixed names and own fields, unique names, and a tool_choice that names an offered tool.

import { fail } from '../errors.mjs';
import { has, isObject } from '../values.mjs';
import { badTag, checkBoolean, checkCacheControl, checkDict, checkInteger, checkString, checkStringList, onlyKeys } from './fields.mjs';
import { checkMcpToolset } from './mcp-connector.mjs';

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const TOOL_NAME_PATTERN = '^[a-zA-Z0-9_-]{1,128}$';
const CUSTOM_TOOL_FIELDS = new Set([
  'type', 'name', 'description', 'input_schema', 'cache_control', 'strict', 'defer_loading', 'allowed_callers', 'input_examples',
]);
/** Fields every Anthropic-defined tool may carry besides `type` and `name`. */
const COMMON_TOOL_FIELDS = ['type', 'name', 'cache_control', 'defer_loading', 'allowed_callers', 'strict'];
const WEB_SEARCH_FIELDS = [...COMMON_TOOL_FIELDS, 'max_uses', 'allowed_domains', 'blocked_domains', 'user_location'];
const WEB_FETCH_FIELDS = [...COMMON_TOOL_FIELDS, 'max_uses', 'allowed_domains', 'blocked_domains', 'citations', 'max_content_tokens'];
/**
 * Anthropic-defined tools (server tools, and client tools whose schema Anthropic defines): the
 * `name` each must have and the fields each accepts. From the API reference and the SDKs' types.
 */
const TYPED_TOOLS = {
  web_search_20250305: { name: 'web_search', fields: WEB_SEARCH_FIELDS },
  web_search_20260209: { name: 'web_search', fields: WEB_SEARCH_FIELDS },
  web_fetch_20250910: { name: 'web_fetch', fields: WEB_FETCH_FIELDS },
  web_fetch_20260209: { name: 'web_fetch', fields: WEB_FETCH_FIELDS },
  code_execution_20250522: { name: 'code_execution', fields: COMMON_TOOL_FIELDS },
  code_execution_20250825: { name: 'code_execution', fields: COMMON_TOOL_FIELDS },
  code_execution_20260120: { name: 'code_execution', fields: COMMON_TOOL_FIELDS },
  tool_search_tool_regex_20251119: { name: 'tool_search_tool_regex', fields: COMMON_TOOL_FIELDS },
  tool_search_tool_bm25_20251119: { name: 'tool_search_tool_bm25', fields: COMMON_TOOL_FIELDS },
  bash_20241022: { name: 'bash', fields: COMMON_TOOL_FIELDS },
  bash_20250124: { name: 'bash', fields: COMMON_TOOL_FIELDS },
  text_editor_20241022: { name: 'str_replace_editor', fields: COMMON_TOOL_FIELDS },
  text_editor_20250124: { name: 'str_replace_editor', fields: COMMON_TOOL_FIELDS },
  text_editor_20250429: { name: 'str_replace_based_edit_tool', fields: COMMON_TOOL_FIELDS },
  text_editor_20250728: { name: 'str_replace_based_edit_tool', fields: [...COMMON_TOOL_FIELDS, 'max_characters'] },
  memory_20250818: { name: 'memory', fields: COMMON_TOOL_FIELDS },
  computer_20241022: { name: 'computer', fields: [...COMMON_TOOL_FIELDS, 'display_width_px', 'display_height_px', 'display_number'] },
  computer_20250124: { name: 'computer', fields: [...COMMON_TOOL_FIELDS, 'display_width_px', 'display_height_px', 'display_number'] },
  computer_20251124: { name: 'computer', fields: [...COMMON_TOOL_FIELDS, 'display_width_px', 'display_height_px', 'display_number', 'enable_zoom'] },
};
const TOOL_TAGS = ['custom', ...Object.keys(TYPED_TOOLS), 'mcp_toolset'];
const TOOL_CHOICE_FIELDS = {
  auto: new Set(['type', 'disable_parallel_tool_use']),
  any: new Set(['type', 'disable_parallel_tool_use']),
  tool: new Set(['type', 'name', 'disable_parallel_tool_use']),
  none: new Set(['type']),
};

function checkCommonToolFields(tool, p) {
  if (has(tool, 'defer_loading')) checkBoolean(tool.defer_loading, `${p}.defer_loading`);
  if (has(tool, 'strict')) checkBoolean(tool.strict, `${p}.strict`);
  if (has(tool, 'allowed_callers')) checkStringList(tool.allowed_callers, `${p}.allowed_callers`);
  checkCacheControl(tool, `${p}.`);
}

function checkDomains(tool, p) {
  for (const f of ['allowed_domains', 'blocked_domains']) {
    if (has(tool, f) && tool[f] !== null) checkStringList(tool[f], `${p}.${f}`);
  }
  if (Array.isArray(tool.allowed_domains) && Array.isArray(tool.blocked_domains)) {
    fail(`${p}: Cannot specify both allowed_domains and blocked_domains`);
  }
  if (has(tool, 'max_uses') && tool.max_uses !== null) checkInteger(tool.max_uses, `${p}.max_uses`, 1);
}

/** An Anthropic-defined tool: its fixed name and its own fields. */
function checkTypedTool(tool, i) {
  const spec = TYPED_TOOLS[tool.type];
  const p = `tools.${i}.${tool.type}`;
  onlyKeys(tool, new Set(spec.fields), `${p}.`);
  if (!has(tool, 'name')) fail(`${p}.name: Field required`);
  if (tool.name !== spec.name) fail(`${p}.name: Input should be '${spec.name}'`);
  checkCommonToolFields(tool, p);
  if (tool.type.startsWith('web_search') || tool.type.startsWith('web_fetch')) checkDomains(tool, p);
  if (has(tool, 'user_location') && tool.user_location !== null) {
    const loc = tool.user_location;
    checkDict(loc, `${p}.user_location`);
    if (loc.type !== 'approximate') fail(`${p}.user_location.type: Input should be 'approximate'`);
    onlyKeys(loc, new Set(['type', 'city', 'region', 'country', 'timezone']), `${p}.user_location.`);
    for (const f of ['city', 'region', 'country', 'timezone']) if (has(loc, f) && loc[f] !== null) checkString(loc[f], `${p}.user_location.${f}`);
  }
  if (has(tool, 'citations') && tool.citations !== null) {
    checkDict(tool.citations, `${p}.citations`);
    if (has(tool.citations, 'enabled')) checkBoolean(tool.citations.enabled, `${p}.citations.enabled`);
  }
  if (has(tool, 'max_content_tokens') && tool.max_content_tokens !== null) checkInteger(tool.max_content_tokens, `${p}.max_content_tokens`, 1);
  if (has(tool, 'max_characters') && tool.max_characters !== null) checkInteger(tool.max_characters, `${p}.max_characters`, 1);
  for (const f of ['display_width_px', 'display_height_px']) if (has(tool, f) || tool.type.startsWith('computer')) checkInteger(tool[f], `${p}.${f}`, 1);
}

/**
 * Checks `tools`; returns the offered names. `betas`: the request's, which an `mcp_toolset` (a
 * server's tools, which have no name here) needs.
 */
export function checkTools(tools, betas = []) {
  if (!Array.isArray(tools)) fail('tools: Input should be a valid list');
  const names = new Set();
  tools.forEach((tool, i) => {
    if (!isObject(tool)) fail(`tools.${i}: Input should be a valid dictionary`);
    if (tool.type === 'mcp_toolset') return checkMcpToolset(tool, i, betas);
    if (has(tool, 'type') && tool.type !== 'custom' && tool.type !== null) {
      if (!has(TYPED_TOOLS, tool.type)) badTag(`tools.${i}`, tool.type, TOOL_TAGS);
      checkTypedTool(tool, i);
    } else {
      const p = `tools.${i}.custom`;
      onlyKeys(tool, CUSTOM_TOOL_FIELDS, `${p}.`);
      if (!has(tool, 'name')) fail(`${p}.name: Field required`);
      checkString(tool.name, `${p}.name`);
      if (!TOOL_NAME.test(tool.name)) fail(`${p}.name: String should match pattern '${TOOL_NAME_PATTERN}'`);
      if (has(tool, 'description')) checkString(tool.description, `${p}.description`);
      if (!has(tool, 'input_schema')) fail(`${p}.input_schema: Field required`);
      if (!isObject(tool.input_schema)) fail(`${p}.input_schema: Input should be a valid dictionary`);
      if (!has(tool.input_schema, 'type')) fail(`${p}.input_schema.type: Field required`);
      if (tool.input_schema.type !== 'object') fail(`${p}.input_schema.type: Input should be 'object'`);
      if (has(tool, 'input_examples')) {
        if (!Array.isArray(tool.input_examples)) fail(`${p}.input_examples: Input should be a valid list`);
        tool.input_examples.forEach((e, k) => checkDict(e, `${p}.input_examples.${k}`));
      }
      checkCommonToolFields(tool, p);
    }
    if (names.has(tool.name)) fail('tools: Tool names must be unique.');
    names.add(tool.name);
  });
  return names;
}

export function checkToolChoice(choice, names) {
  if (!isObject(choice)) fail('tool_choice: Input should be a valid dictionary');
  const type = choice.type;
  if (typeof type !== 'string' || !has(TOOL_CHOICE_FIELDS, type)) {
    fail(`tool_choice: Input tag '${type}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'`);
  }
  onlyKeys(choice, TOOL_CHOICE_FIELDS[type], `tool_choice.${type}.`);
  if (has(choice, 'disable_parallel_tool_use') && typeof choice.disable_parallel_tool_use !== 'boolean') {
    fail(`tool_choice.${type}.disable_parallel_tool_use: Input should be a valid boolean`);
  }
  if (type === 'tool') {
    if (!has(choice, 'name')) fail('tool_choice.tool.name: Field required');
    checkString(choice.name, 'tool_choice.tool.name');
  }
  if ((type === 'any' || type === 'tool') && names.size === 0) {
    fail(`tool_choice: tool_choice.type '${type}' may only be specified while providing tools.`);
  }
  if (type === 'tool' && !names.has(choice.name)) {
    fail(`tool_choice.tool.name: tool '${choice.name}' is not one of the offered tools: ${[...names].join(', ')}`);
  }
}
