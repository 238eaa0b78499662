// The request's top-level fields: which exist, and the type and range each must have. Also the
// small checks every rule file uses, worded as the real API words its validation errors.

import { fail } from '../errors.mjs';
import { has, isObject } from '../values.mjs';

export function onlyKeys(obj, allowed, prefix) {
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) fail(`${prefix}${key}: Extra inputs are not permitted`);
  }
}

export const TOP_LEVEL = new Set([
  'model', 'max_tokens', 'messages', 'system', 'tools', 'tool_choice', 'temperature', 'top_k', 'top_p',
  'stop_sequences', 'stream', 'metadata', 'thinking', 'service_tier', 'cache_control', 'output_config',
  'output_format', 'context_management', 'container', 'inference_geo', 'mcp_servers',
]);

export const tagList = (tags) => tags.map((t) => `'${t}'`).join(', ');
export function badTag(where, tag, tags) {
  fail(`${where}: Input tag '${tag}' found using 'type' does not match any of the expected tags: ${tagList(tags)}`);
}

export function checkString(value, where) {
  if (typeof value !== 'string') fail(`${where}: Input should be a valid string`);
}

export function checkBoolean(value, where) {
  if (typeof value !== 'boolean') fail(`${where}: Input should be a valid boolean`);
}

export function checkInteger(value, where, min) {
  if (!Number.isInteger(value)) fail(`${where}: Input should be a valid integer`);
  if (min !== undefined && value < min) fail(`${where}: Input should be greater than or equal to ${min}`);
}

export function checkStringList(value, where) {
  if (!Array.isArray(value)) fail(`${where}: Input should be a valid list`);
  value.forEach((s, i) => checkString(s, `${where}.${i}`));
}

export function checkDict(value, where) {
  if (!isObject(value)) fail(`${where}: Input should be a valid dictionary`);
}

/** `cache_control` on a block, a tool, a system block or the request (`prefix` ends with '.' or is ''). */
export function checkCacheControl(block, prefix) {
  if (!has(block, 'cache_control') || block.cache_control === null) return;
  const cc = block.cache_control;
  if (!isObject(cc)) fail(`${prefix}cache_control: Input should be a valid dictionary`);
  if (cc.type !== 'ephemeral') fail(`${prefix}cache_control.type: Input should be 'ephemeral'`);
  onlyKeys(cc, new Set(['type', 'ttl']), `${prefix}cache_control.`);
  if (has(cc, 'ttl') && cc.ttl !== '5m' && cc.ttl !== '1h') fail(`${prefix}cache_control.ttl: Input should be '5m' or '1h'`);
}

export const thinkingOn = (body) => isObject(body.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive');

function checkThinkingConfig(body) {
  const t = body.thinking;
  checkDict(t, 'thinking');
  const tags = ['enabled', 'disabled', 'adaptive'];
  if (!tags.includes(t.type)) badTag('thinking', t.type, tags);
  if (t.type === 'enabled') {
    onlyKeys(t, new Set(['type', 'budget_tokens']), 'thinking.enabled.');
    if (!has(t, 'budget_tokens')) fail('thinking.enabled.budget_tokens: Field required');
    checkInteger(t.budget_tokens, 'thinking.enabled.budget_tokens', 1024);
    if (Number.isInteger(body.max_tokens) && t.budget_tokens >= body.max_tokens) {
      fail(
        '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at ' +
          'https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
      );
    }
  } else {
    onlyKeys(t, new Set(['type']), `thinking.${t.type}.`);
  }
}

export function checkOptionalFields(body) {
  if (has(body, 'temperature')) {
    if (typeof body.temperature !== 'number' || !Number.isFinite(body.temperature)) fail('temperature: Input should be a valid number');
    if (body.temperature < 0) fail('temperature: Input should be greater than or equal to 0');
    if (body.temperature > 1) fail('temperature: Input should be less than or equal to 1');
  }
  if (has(body, 'top_p')) {
    if (typeof body.top_p !== 'number' || !Number.isFinite(body.top_p)) fail('top_p: Input should be a valid number');
    if (body.top_p < 0 || body.top_p > 1) fail('top_p: Input should be between 0 and 1');
  }
  if (has(body, 'top_k')) checkInteger(body.top_k, 'top_k', 0);
  if (has(body, 'stop_sequences')) checkStringList(body.stop_sequences, 'stop_sequences');
  if (has(body, 'metadata')) {
    checkDict(body.metadata, 'metadata');
    onlyKeys(body.metadata, new Set(['user_id']), 'metadata.');
    if (has(body.metadata, 'user_id') && body.metadata.user_id !== null) checkString(body.metadata.user_id, 'metadata.user_id');
  }
  if (has(body, 'thinking')) checkThinkingConfig(body);
  if (has(body, 'service_tier') && body.service_tier !== 'auto' && body.service_tier !== 'standard_only') {
    fail("service_tier: Input should be 'auto' or 'standard_only'");
  }
  if (has(body, 'cache_control')) {
    if (!isObject(body.cache_control)) fail('cache_control: Input should be a valid dictionary');
    checkCacheControl(body, '');
  }
  if (has(body, 'container') && body.container !== null) {
    if (isObject(body.container)) {
      onlyKeys(body.container, new Set(['id', 'skills']), 'container.');
      if (has(body.container, 'id') && body.container.id !== null) checkString(body.container.id, 'container.id');
    } else {
      checkString(body.container, 'container');
    }
  }
  if (has(body, 'inference_geo') && body.inference_geo !== null) checkString(body.inference_geo, 'inference_geo');
}
