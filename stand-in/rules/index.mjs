// Every rule a request to POST /v1/messages must meet, in the order the real API applies them:
// the headers (auth first), then the body's fields, tools, messages and the rules across messages,
// each under the request's API version (versions.mjs).

import { Refusal, fail } from '../errors.mjs';
import { has, isObject } from '../values.mjs';
import { checkBoolean, checkOptionalFields, checkString, onlyKeys, thinkingOn, TOP_LEVEL } from './fields.mjs';
import { checkTools, checkToolChoice } from './tools.mjs';
import { checkMessageShapes, checkSystem } from './blocks.mjs';
import { checkContextManagement } from './context-management.mjs';
import { checkOutputFields } from './output-format.mjs';
import { checkMcpPairing, checkMcpServers, checkMcpToolsets } from './mcp-connector.mjs';
import { checkVersion, LEGACY_VERSION, topLevelFor } from './versions.mjs';
import {
  checkNoFinalThinking, checkPairing, checkPendingCodeExecution, checkServerPairing, checkThinkingCompatibility, checkThinkingPlacement,
} from './conversation.mjs';

/**
 * Validates a parsed request body; throws a Refusal the way the real API would answer. `betas`: the
 * request's `anthropic-beta` names, which beta features (context management, system messages,
 * task budgets, the MCP connector) need; `version`: its `anthropic-version` (versions.mjs).
 */
export function validateBody(body, betas = [], version = LEGACY_VERSION) {
  if (!isObject(body)) fail('Input should be a valid dictionary (the request body must be a JSON object)');
  onlyKeys(body, topLevelFor(TOP_LEVEL, version), '');

  if (!has(body, 'model')) fail('model: Field required');
  checkString(body.model, 'model');
  if (body.model.length === 0) fail('model: String should have at least 1 character');

  if (!has(body, 'max_tokens')) fail('max_tokens: Field required');
  if (!Number.isInteger(body.max_tokens)) fail('max_tokens: Input should be a valid integer');
  if (body.max_tokens < 1) fail('max_tokens: Input should be greater than or equal to 1');

  if (!has(body, 'messages')) fail('messages: Field required');
  if (!Array.isArray(body.messages)) fail('messages: Input should be a valid list');
  if (body.messages.length === 0) fail('messages: at least one message is required');

  if (has(body, 'stream')) checkBoolean(body.stream, 'stream');
  if (has(body, 'system')) checkSystem(body.system);
  checkOptionalFields(body);
  checkOutputFields(body, betas);
  if (has(body, 'context_management') && body.context_management !== null) checkContextManagement(body.context_management, betas);
  const servers = checkMcpServers(body, betas);
  const names = has(body, 'tools') ? checkTools(body.tools, betas) : new Set();
  checkMcpToolsets(body, servers);
  if (has(body, 'tool_choice')) checkToolChoice(body.tool_choice, names);
  checkThinkingCompatibility(body);

  checkMessageShapes(body.messages, { betas, toolNames: names, version });
  checkPairing(body.messages);
  checkServerPairing(body.messages);
  checkMcpPairing(body.messages);
  if (thinkingOn(body)) checkThinkingPlacement(body.messages);
  else checkNoFinalThinking(body.messages);
  checkPendingCodeExecution(body);
}

/** Header checks, in the order the real API applies them (auth first); returns the request's API version. */
export function checkHeaders(req, apiKey) {
  const xKey = req.headers['x-api-key'];
  const auth = req.headers.authorization;
  const bearer = typeof auth === 'string' && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, '') : undefined;
  const keys = Array.isArray(apiKey) ? apiKey : [apiKey];
  const authorised = keys.includes(xKey !== undefined ? xKey : bearer);
  if (!authorised) throw new Refusal(401, 'invalid x-api-key');

  const version = req.headers['anthropic-version'];
  checkVersion(version);
  const type = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    fail(`content-type: must be application/json, got ${JSON.stringify(req.headers['content-type'] ?? null)}`);
  }
  return version;
}
