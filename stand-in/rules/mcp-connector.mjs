// The MCP connector (a beta): `mcp_servers`, the remote MCP servers Anthropic connects to for the
// request, each offered to the model through exactly one `mcp_toolset` entry of `tools`; and the
// pairing of the `mcp_tool_use` / `mcp_tool_result` blocks its calls leave in assistant messages
// (their shapes are checked with the other blocks, in blocks.mjs).

import { fail } from '../errors.mjs';
import { blocksOf, has } from '../values.mjs';
import { needBeta } from './context-management.mjs';
import { badTag, checkBoolean, checkCacheControl, checkDict, checkString, onlyKeys } from './fields.mjs';

export const MCP_CLIENT_BETA = 'mcp-client-2025-11-20';

const SERVER_FIELDS = new Set(['type', 'url', 'name', 'authorization_token']);
const TOOLSET_FIELDS = new Set(['type', 'mcp_server_name', 'default_config', 'configs', 'cache_control']);
const TOOL_CONFIG_FIELDS = new Set(['enabled', 'defer_loading']);

/** `default_config`, or one entry of `configs`: `{ enabled?, defer_loading? }`. */
function checkToolConfig(config, where) {
  checkDict(config, where);
  onlyKeys(config, TOOL_CONFIG_FIELDS, `${where}.`);
  for (const f of TOOL_CONFIG_FIELDS) if (has(config, f)) checkBoolean(config[f], `${where}.${f}`);
}

/** One `mcp_toolset` entry of `tools` (at index `i`), by shape; which server it names is checked with `mcp_servers`. */
export function checkMcpToolset(tool, i, betas) {
  needBeta(betas, MCP_CLIENT_BETA, `tools.${i}`, 'the `mcp_toolset` tool');
  const p = `tools.${i}.mcp_toolset`;
  onlyKeys(tool, TOOLSET_FIELDS, `${p}.`);
  if (!has(tool, 'mcp_server_name')) fail(`${p}.mcp_server_name: Field required`);
  checkString(tool.mcp_server_name, `${p}.mcp_server_name`);
  if (has(tool, 'default_config') && tool.default_config !== null) checkToolConfig(tool.default_config, `${p}.default_config`);
  if (has(tool, 'configs') && tool.configs !== null) {
    checkDict(tool.configs, `${p}.configs`);
    for (const [name, config] of Object.entries(tool.configs)) checkToolConfig(config, `${p}.configs.${name}`);
  }
  checkCacheControl(tool, `${p}.`);
}

/** `mcp_servers`, by shape: returns the servers' names, in order (none without the field). */
export function checkMcpServers(body, betas) {
  if (!has(body, 'mcp_servers') || body.mcp_servers === null) return [];
  needBeta(betas, MCP_CLIENT_BETA, 'mcp_servers', 'the MCP connector');
  if (!Array.isArray(body.mcp_servers)) fail('mcp_servers: Input should be a valid list');
  const names = [];
  body.mcp_servers.forEach((server, k) => {
    const p = `mcp_servers.${k}`;
    checkDict(server, p);
    if (server.type !== 'url') badTag(p, server.type, ['url']);
    onlyKeys(server, SERVER_FIELDS, `${p}.`);
    for (const f of ['url', 'name']) {
      if (!has(server, f)) fail(`${p}.${f}: Field required`);
      checkString(server[f], `${p}.${f}`);
    }
    // Never quoted back: a URL may carry a credential of its own.
    if (!server.url.startsWith('https://')) fail(`${p}.url: the URL of an MCP server must start with https://`);
    if (server.name.length === 0) fail(`${p}.name: String should have at least 1 character`);
    if (names.includes(server.name)) fail(`mcp_servers: MCP server names must be unique (${server.name})`);
    if (has(server, 'authorization_token') && server.authorization_token !== null) checkString(server.authorization_token, `${p}.authorization_token`);
    names.push(server.name);
  });
  return names;
}

/**
 * The `mcp_toolset` entries of `tools` against the servers' `names` (both already checked by
 * shape): every server is named by exactly one toolset, and every toolset names one of them.
 */
export function checkMcpToolsets(body, names) {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const configured = new Set();
  tools.forEach((tool, i) => {
    if (tool.type !== 'mcp_toolset') return;
    const name = tool.mcp_server_name;
    const at = `tools.${i}.mcp_toolset.mcp_server_name`;
    if (!names.includes(name)) fail(`${at}: MCP server '${name}' is not defined in \`mcp_servers\``);
    if (configured.has(name)) fail(`${at}: MCP server '${name}' is already configured by another \`mcp_toolset\`; each server takes exactly one`);
    configured.add(name);
  });
  names.forEach((name, k) => {
    if (!configured.has(name)) fail(`mcp_servers.${k}: MCP server '${name}' is not used by any \`mcp_toolset\` in \`tools\`; each server needs exactly one`);
  });
}

/**
 * Anthropic runs an MCP call within the turn: its `mcp_tool_result` follows its `mcp_tool_use` in
 * the same assistant message, except in the final message (a paused turn sent back to continue).
 */
export function checkMcpPairing(messages) {
  const last = messages.length - 1;
  messages.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    const open = new Set();
    blocksOf(m).forEach((b, j) => {
      if (b.type === 'mcp_tool_use') open.add(b.id);
      else if (b.type === 'mcp_tool_result') {
        if (!open.has(b.tool_use_id)) {
          fail(`messages.${i}.content.${j}: \`mcp_tool_result\` block has tool_use_id ${b.tool_use_id}, which matches no \`mcp_tool_use\` block before it in this message.`);
        }
        open.delete(b.tool_use_id);
      }
    });
    if (open.size > 0 && i !== last) {
      fail(`messages.${i}: \`mcp_tool_use\` ids were found without \`mcp_tool_result\` blocks: ${[...open].join(', ')}. An \`mcp_tool_use\` block must be followed by its result in the same message.`);
    }
  });
}
